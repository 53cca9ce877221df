package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// A store is a trace compressed in independent blocks with an index, so that
// a reader seeks to the blocks of a run, a round range, an actor or a time
// window without decompressing the rest. Its layout is a valid zstd stream:
//
//	block₁ … blockₙ   zstd frames, each the JSON lines of consecutive records
//	                  of one (curve, run), cut at round boundaries
//	index             a skippable frame (magic 0x184D2A50) holding the
//	                  zstd-compressed JSON Index
//	trailer           a skippable frame (magic 0x184D2A5E) of 16 bytes:
//	                  "MAPLEIDX" and the index frame's offset, uint64 LE
//
// so `zstdcat trace.jsonl.zst` prints exactly the JSON lines a Writer would
// have written, and standard tools keep working on compressed traces.

// StoreFile is the name of the compressed trace in a run directory and
// JSONLFile the name of an uncompressed one.
const (
	StoreFile = "trace.jsonl.zst"
	JSONLFile = "trace.jsonl"
)

// StoreVersion is the version of the index format.
const StoreVersion = 1

const (
	indexMagic   = 0x184D2A50
	trailerMagic = 0x184D2A5E
	trailerID    = "MAPLEIDX"
	trailerSize  = 8 + 16
	// maxBlockBytes and maxIndexBytes bound what a reader decompresses: a
	// block maple writes exceeds blockLimit only by its last record, and the
	// index of a 100 GB trace is a few tens of megabytes, so a file claiming
	// more is damaged — and a damaged (or crafted) frame header must not make
	// the reader allocate whatever size it announces.
	maxBlockBytes = 1 << 30
	maxIndexBytes = 256 << 20
)

// blockTarget is the uncompressed size after which a block ends at the next
// change of round; blockLimit ends it anyway. Blocks of a few hundred
// kilobytes compress nearly as well as the whole trace and decompress in
// about a millisecond. They are variables so that tests can cut many small
// blocks from a few records.
var blockTarget, blockLimit = 512 << 10, 4 << 20

// Index describes the blocks of a store. Curves, Actors and Types are the
// distinct values of the trace (curves in order of appearance, the others
// sorted); blocks refer to them by position.
type Index struct {
	Version int      `json:"version"`
	Curves  []string `json:"curves"`
	Actors  []string `json:"actors"`
	Types   []string `json:"types"`
	Blocks  []Block  `json:"blocks"`
}

// Block is the index entry of one block: where its frame is, and the ranges
// and sets of values its records take.
type Block struct {
	// Offset and Length locate the block's zstd frame in the file.
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
	// Curve indexes Index.Curves; Run is the Monte-Carlo run.
	Curve int `json:"curve"`
	Run   int `json:"run"`
	// Records is the number of records and Bytes their JSON size.
	Records int   `json:"records"`
	Bytes   int64 `json:"bytes"`
	// FirstSeq … MaxTime bound the records' fields.
	FirstSeq uint64  `json:"first_seq"`
	LastSeq  uint64  `json:"last_seq"`
	MinRound int     `json:"min_round"`
	MaxRound int     `json:"max_round"`
	MinTime  float64 `json:"min_time"`
	MaxTime  float64 `json:"max_time"`
	// Actors (senders and receivers) and Types index Index.Actors and
	// Index.Types, ascending.
	Actors []int `json:"actors"`
	Types  []int `json:"types"`
}

// Records returns the total number of records the index describes.
func (ix *Index) Records() int {
	n := 0
	for _, b := range ix.Blocks {
		n += b.Records
	}
	return n
}

// zstd coders shared by every store: an Encoder's EncodeAll and a Decoder's
// DecodeAll are safe for concurrent use. The encoder works on one goroutine
// per call, so its output is a function of its input alone (compressor);
// it keeps as many encoders as there are processors, so that blocks (of
// one store or of several runs' stores) are compressed in parallel. Its
// level is SpeedFastest: on trace lines (Fig. 4's, measured) it compresses
// a block in about three quarters of SpeedDefault's time, and to about 5 %
// fewer bytes; every frame keeps its checksum. blockDecoder
// decodes a block into a buffer of the size the index records for it and no
// further; indexDecoder refuses an index larger than maxIndexBytes.
var (
	compressor = sync.OnceValue(func() *zstd.Encoder {
		return must(zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0))))
	})
	blockDecoder = sync.OnceValue(func() *zstd.Decoder {
		return must(zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true)))
	})
	indexDecoder = sync.OnceValue(func() *zstd.Decoder {
		return must(zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxIndexBytes)))
	})
)

// must returns c, panicking on err: the coders' options are constants, and
// only invalid options fail.
func must[T any](c T, err error) T {
	if err != nil {
		panic(err)
	}
	return c
}

// StoreWriter writes records to a store. Records are JSON-encoded exactly as
// Writer encodes them and gathered into blocks by a goroutine of the
// writer's own, which hands each block to a goroutine of its own to be
// compressed and writes the compressed blocks in order: the caller — a run
// delivering messages — only copies each record into a batch that the
// goroutine takes in order. Close waits for them and writes the index. The
// output is a function of the records alone: each block is compressed on
// its own, whichever goroutine does it.
type StoreWriter struct {
	w   io.Writer
	err error // the first encoding error, or write error seen

	// The caller's side: the batch being filled, the text its entries
	// refer to, and an encoder for the records the goroutine is not handed
	// as they are (see Write).
	batch batch
	enc   encoder

	// The goroutine: the batches to write, in order; the batches it is done
	// with; its first write error; done when it has finished. abandon, set
	// before batches is closed, tells it to leave out the block it holds,
	// as a failed Write left out its record.
	batches chan batch
	free    chan batch
	made    int // batches made so far
	failed  atomic.Pointer[error]
	done    chan struct{}
	abandon bool
	closed  bool

	// The padding keeps the goroutine's fields off the cache lines of the
	// caller's, which every Write reads: the goroutine changes raw at every
	// record, and a line both processors use would go back and forth
	// between them (two lines, for processors that fetch lines in pairs).
	_ [128]byte

	// The goroutine's own.
	raw   []byte // the JSON lines of the current block
	index Index
	names names // actors
	types names
	curve map[string]int
	// lastCurve is the position of the last record's curve, −1 before the
	// first.
	lastCurve int
	cur       *Block
	out       encoder // JSON
	off       int64   // where the next block goes
	// frames are the blocks being compressed, oldest first, at most
	// compressing of them.
	frames      []*frame
	compressing int
}

// batch is records on their way to the goroutine, with the text of their
// fields (and of the lines encoded by Write, if any).
type batch struct {
	entries []entry
	text    []byte
}

// entry is a record of a batch: a copy of it without its maps, and where in
// the batch's text the JSON of its fields is or, when Write encoded it, its
// whole line.
type entry struct {
	rec          Record
	fields, line [2]int
	cut          bool // only end the block if rec would not belong to it
}

// errClosed is the error of a Write after Close.
var errClosed = errors.New("trace store writer closed")

// batchSize is the number of records per batch: enough to make the handing
// over negligible, few enough for a batch to stay in cache. A writer makes
// maxBatches at most, reused: one being filled, one being written and the
// others queued. The goroutine works in bursts — every two or three
// batches it ends a block (a few hundred kilobytes, a millisecond or two
// to compress) and may have to wait for an earlier one's compression —
// while a run writes records steadily, about as fast as the goroutine
// takes them on average; four queued batches let the run go on through
// such a wait.
//
// A writer compresses at most maxCompressing blocks at once, and no more
// than there are processors: compression is half of the writer's work, and
// with a processor to spare it no longer paces a run whose own work per
// message is small; a few blocks (0.5–4 MB each) in flight are enough for
// that, and keep a writer's memory bounded.
const batchSize, maxBatches, maxCompressing = 1024, 6, 4

// NewStoreWriter returns a StoreWriter on w. Call Close when done (it stops
// the writer's goroutine); it does not close w.
func NewStoreWriter(w io.Writer) *StoreWriter {
	s := &StoreWriter{w: w, compressing: min(runtime.GOMAXPROCS(0), maxCompressing), names: names{table: map[string]int{}}, types: names{table: map[string]int{}}, curve: map[string]int{}, lastCurve: -1}
	s.index.Version = StoreVersion
	return s
}

// Write appends one record. An error writing an earlier block is returned
// by a later Write, or by Close.
//
// A record that Describer.DescribeText described (its fields as JSON text,
// no Fields map, no Payload) and whose floats JSON can represent is handed
// to the goroutine as it is, to be encoded there. Any other record is
// encoded here, so that the error of one JSON cannot encode (a NaN) is
// returned by its Write, and the goroutine is handed its line.
func (s *StoreWriter) Write(rec *Record) error {
	if s.err != nil {
		return s.err
	}
	if err := s.failed.Load(); err != nil {
		s.err = *err
		return s.err
	}
	if s.closed {
		return errClosed
	}
	b := &s.batch
	if b.entries == nil {
		b.entries = make([]entry, 0, batchSize)
		s.made++
	}
	b.entries = b.entries[:len(b.entries)+1] // one copy of rec, in place
	e := &b.entries[len(b.entries)-1]
	e.rec = *rec
	e.rec.Fields, e.rec.Payload, e.rec.fieldsText = nil, nil, nil
	e.cut = false
	n := len(b.text)
	if len(rec.Fields) == 0 && rec.Payload == nil && finite(rec) {
		b.text = append(b.text, rec.fieldsText...)
		e.fields, e.line = [2]int{n, len(b.text)}, [2]int{}
	} else {
		text, err := s.enc.appendRecord(b.text, rec)
		if err != nil {
			// The record is not written, but the block before it ends
			// as if it had been.
			e.cut = true
			s.err = err
			return err
		}
		b.text = text
		e.fields, e.line = [2]int{}, [2]int{n, len(b.text)}
	}
	if len(b.entries) == batchSize {
		s.send()
	}
	return nil
}

// finite reports whether the floats of rec are finite, as JSON requires.
func finite(rec *Record) bool {
	// x − x is 0 for a finite x, NaN for ±Inf and NaN.
	return rec.Time-rec.Time == 0 && rec.Norm-rec.Norm == 0 && rec.Sent-rec.Sent == 0 &&
		rec.Start-rec.Start == 0 && rec.End-rec.End == 0
}

// send hands the batch to the goroutine, starting it with the first batch,
// and takes a batch it is done with (or a new one) for the next.
func (s *StoreWriter) send() {
	if s.batches == nil {
		// One batch is being filled, one written; the others may wait.
		s.batches, s.free, s.done = make(chan batch, maxBatches-2), make(chan batch, maxBatches), make(chan struct{})
		go s.run()
	}
	s.batches <- s.batch
	var b batch
	select {
	case b = <-s.free:
	default:
		if s.made < maxBatches {
			s.batch = batch{} // Write makes it
			return
		}
		b = <-s.free
	}
	s.batch = batch{entries: b.entries[:0], text: b.text[:0]}
}

// run is the goroutine: it adds the records of the batches it is handed to
// blocks, and compresses and writes each block as it ends. After a write
// error it only records the error and drops what follows.
func (s *StoreWriter) run() {
	defer close(s.done)
	for b := range s.batches {
		for i := range b.entries {
			if s.failed.Load() != nil {
				break
			}
			e := &b.entries[i]
			if e.cut {
				s.cut(&e.rec)
			} else if e.line != [2]int{} {
				s.add(&e.rec, b.text[e.line[0]:e.line[1]])
			} else {
				e.rec.fieldsText = b.text[e.fields[0]:e.fields[1]]
				s.add(&e.rec, nil)
			}
		}
		s.free <- b
	}
	if !s.abandon && s.failed.Load() == nil {
		s.flush()
	}
	for len(s.frames) > 0 {
		s.writeOldest()
	}
}

// cut ends the current block if rec does not belong to it: another run or
// curve, or a new round once the block has reached its target size. It
// returns the position of rec's curve.
func (s *StoreWriter) cut(rec *Record) int {
	ci := s.lastCurve
	if ci < 0 || s.index.Curves[ci] != rec.Curve { // a run's records share theirs
		var ok bool
		if ci, ok = s.curve[rec.Curve]; !ok {
			ci = len(s.index.Curves)
			s.curve[rec.Curve] = ci
			s.index.Curves = append(s.index.Curves, rec.Curve)
		}
		s.lastCurve = ci
	}
	if b := s.cur; b != nil && (b.Curve != ci || b.Run != rec.Run || len(s.raw) >= blockLimit ||
		(len(s.raw) >= blockTarget && rec.Round != b.MaxRound)) {
		s.flush()
	}
	return ci
}

// add appends rec to the current block, ending the block first where
// blocks end. line is rec's JSON line if it is already encoded.
func (s *StoreWriter) add(rec *Record, line []byte) {
	ci := s.cut(rec)
	n := len(s.raw)
	if line != nil {
		s.raw = append(s.raw, line...)
	} else {
		// Write checked that the record encodes.
		s.raw, _ = s.out.appendRecord(s.raw, rec)
	}
	b := s.cur
	if b == nil {
		b = &Block{Curve: ci, Run: rec.Run, FirstSeq: rec.Seq, MinRound: rec.Round, MaxRound: rec.Round, MinTime: rec.Time, MaxTime: rec.Time}
		s.cur = b
	}
	b.Records++
	b.Bytes += int64(len(s.raw) - n)
	b.LastSeq = rec.Seq
	b.MinRound, b.MaxRound = min(b.MinRound, rec.Round), max(b.MaxRound, rec.Round)
	b.MinTime, b.MaxTime = min(b.MinTime, rec.Time), max(b.MaxTime, rec.Time)
	for _, name := range [2]string{rec.From, rec.To} {
		a := s.out.actor(name)
		if a.at < 0 {
			a.at = intern(s.names.table, name)
		}
		s.names.mark(a.at)
	}
	s.types.see(rec.Type)
}

// intern returns the position of name in table, adding it if new.
func intern(table map[string]int, name string) int {
	i, ok := table[name]
	if !ok {
		i = len(table)
		table[name] = i
	}
	return i
}

// names is a table of the actor (or type) names of a store and the set of
// those the current block holds. A record's names are usually the last
// ones seen, so those are remembered and found without hashing.
type names struct {
	table   map[string]int
	last    [2]string // the last two names seen, most recent first,
	lastAt  [2]int    // their positions,
	known   int       // and how many of them there are (0 to 2)
	inBlock []bool    // by position: seen in the current block
	block   []int     // the positions seen in the current block
}

// see marks name as seen in the current block.
func (ns *names) see(name string) {
	var i int
	switch {
	case ns.known > 0 && name == ns.last[0]:
		i = ns.lastAt[0]
	case ns.known > 1 && name == ns.last[1]:
		i = ns.lastAt[1]
		ns.last[0], ns.last[1], ns.lastAt[0], ns.lastAt[1] = ns.last[1], ns.last[0], ns.lastAt[1], ns.lastAt[0]
	default:
		ns.known = min(ns.known+1, 2)
		i = intern(ns.table, name)
		ns.last[1], ns.lastAt[1] = ns.last[0], ns.lastAt[0]
		ns.last[0], ns.lastAt[0] = name, i
	}
	ns.mark(i)
}

// mark marks the name at position i of the table as seen in the current
// block.
func (ns *names) mark(i int) {
	if i >= len(ns.inBlock) {
		ns.inBlock = append(ns.inBlock, make([]bool, i+1-len(ns.inBlock))...)
	}
	if !ns.inBlock[i] {
		ns.inBlock[i] = true
		ns.block = append(ns.block, i)
	}
}

// endBlock returns the positions seen in the block that ends, and starts
// the next one.
func (ns *names) endBlock() []int {
	seen := slices.Clone(ns.block)
	for _, i := range ns.block {
		ns.inBlock[i] = false
	}
	ns.block = ns.block[:0]
	return seen
}

// flush ends the current block: it hands the block's lines to a goroutine
// that compresses them, and writes the blocks compressed before it, in
// order, waiting for the oldest while compressing blocks are at their limit.
func (s *StoreWriter) flush() {
	b := s.cur
	if b == nil {
		return
	}
	s.cur = nil
	b.Actors, b.Types = s.names.endBlock(), s.types.endBlock()
	f := framePool.Get().(*frame)
	f.block, f.done = *b, make(chan struct{})
	f.raw, s.raw = s.raw, f.raw[:0]
	s.frames = append(s.frames, f)
	go f.compress()
	for len(s.frames) > 0 && (len(s.frames) > s.compressing || s.frames[0].ready()) {
		s.writeOldest()
	}
}

// frame is a block on its way to the file: its index entry, its JSON lines
// and their zstd frame, which done announces.
type frame struct {
	block    Block
	raw, zst []byte
	done     chan struct{}
}

// compress compresses the block's lines and announces it.
func (f *frame) compress() {
	f.zst = compressor().EncodeAll(f.raw, f.zst[:0])
	close(f.done)
}

// ready reports whether the frame is compressed.
func (f *frame) ready() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// writeOldest waits for the oldest block being compressed, writes its frame
// unless an earlier write failed, and adds it to the index.
func (s *StoreWriter) writeOldest() {
	f := s.frames[0]
	<-f.done
	s.frames = slices.Delete(s.frames, 0, 1)
	defer framePool.Put(f)
	if s.failed.Load() != nil {
		return
	}
	if _, err := s.w.Write(f.zst); err != nil {
		s.failed.Store(&err)
		return
	}
	f.block.Offset, f.block.Length = s.off, int64(len(f.zst))
	s.off += f.block.Length
	s.index.Blocks = append(s.index.Blocks, f.block)
}

// framePool keeps written frames for their buffers, which the blocks of later
// stores (a scenario's runs and curves) reuse.
var framePool = sync.Pool{New: func() any { return new(frame) }}

// Close writes the last block, the index and the trailer, after waiting for
// the blocks before it to be written.
// A second Close only returns the first one's error, if any.
func (s *StoreWriter) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	s.send() // the last batch, and the goroutine if it has not started
	s.abandon = s.err != nil
	close(s.batches)
	<-s.done
	if s.err != nil {
		return s.err
	}
	if err := s.failed.Load(); err != nil {
		s.err = *err
		return s.err
	}
	// The tables are sorted and the blocks' references renumbered, so that
	// the index does not depend on the order names were first met in.
	s.index.Actors = sortedTable(s.names.table, s.index.Blocks, func(b *Block) []int { return b.Actors })
	s.index.Types = sortedTable(s.types.table, s.index.Blocks, func(b *Block) []int { return b.Types })
	return writeIndex(s.w, s.off, &s.index)
}

// sortedTable returns the names of table sorted, and rewrites the positions
// that refs returns for every block to positions in that order, ascending.
func sortedTable(table map[string]int, blocks []Block, refs func(*Block) []int) []string {
	names := make([]string, len(table))
	for name, i := range table {
		names[i] = name
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	pos := make([]int, len(names))
	for i, name := range names {
		pos[i], _ = slices.BinarySearch(sorted, name)
	}
	for i := range blocks {
		r := refs(&blocks[i])
		for k := range r {
			r[k] = pos[r[k]]
		}
		slices.Sort(r)
	}
	return sorted
}

// writeIndex writes the index frame at offset off of w, and the trailer.
func writeIndex(w io.Writer, off int64, ix *Index) error {
	js, err := json.Marshal(ix)
	if err != nil {
		return err
	}
	body := compressor().EncodeAll(js, nil)
	frame := make([]byte, 8, 8+len(body)+trailerSize)
	binary.LittleEndian.PutUint32(frame, indexMagic)
	binary.LittleEndian.PutUint32(frame[4:], uint32(len(body)))
	frame = append(frame, body...)
	frame = binary.LittleEndian.AppendUint32(frame, trailerMagic)
	frame = binary.LittleEndian.AppendUint32(frame, 16)
	frame = append(frame, trailerID...)
	frame = binary.LittleEndian.AppendUint64(frame, uint64(off))
	_, err = w.Write(frame)
	return err
}

// Store is an open compressed trace.
type Store struct {
	r    io.ReaderAt
	name string
	// Index describes the store's blocks.
	Index Index
	end   int64 // offset of the index frame: where the blocks end
}

// ErrNotStore reports a file that is not a compressed trace store.
var ErrNotStore = errors.New("not a maple trace store")

// ErrCorrupt reports a store whose bytes changed after they were written: a
// block, or the index, whose zstd frame does not decompress (every frame
// carries a checksum of its content, so a flipped byte rarely goes
// unnoticed), or decompresses to another size than the index records, or
// to lines that are not trace records. The error names the file and the
// block, by its position in the index and its byte offset.
var ErrCorrupt = errors.New("corrupt")

// ReadStore reads the index of a store of size bytes on r; name labels
// errors.
func ReadStore(r io.ReaderAt, size int64, name string) (*Store, error) {
	bad := func(why string) error { return fmt.Errorf("%s: %w (%s)", name, ErrNotStore, why) }
	if size < trailerSize+8 {
		return nil, bad(fmt.Sprintf("%d bytes, too short for an index and its trailer", size))
	}
	var tr [trailerSize]byte
	if _, err := r.ReadAt(tr[:], size-trailerSize); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if binary.LittleEndian.Uint32(tr[:]) != trailerMagic || binary.LittleEndian.Uint32(tr[4:]) != 16 || string(tr[8:16]) != trailerID {
		return nil, bad(fmt.Sprintf("no index trailer in the last %d bytes (at byte %d): cut short (by an interrupted run or copy), or damaged there", trailerSize, size-trailerSize))
	}
	off := binary.LittleEndian.Uint64(tr[16:])
	if off > uint64(size-trailerSize-8) {
		return nil, fmt.Errorf("%s: the index trailer at byte %d is %w: it puts the index at byte %d, beyond the file's %d bytes", name, size-trailerSize, ErrCorrupt, off, size)
	}
	var head [8]byte
	if _, err := r.ReadAt(head[:], int64(off)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	n := int64(binary.LittleEndian.Uint32(head[4:]))
	if magic := binary.LittleEndian.Uint32(head[:]); magic != indexMagic || int64(off)+8+n != size-trailerSize {
		return nil, fmt.Errorf("%s: the index frame at byte %d is %w: its header (magic %#x, %d bytes) does not frame the %d bytes up to the trailer",
			name, off, ErrCorrupt, magic, n, size-trailerSize-int64(off)-8)
	}
	body := make([]byte, n)
	if _, err := r.ReadAt(body, int64(off)+8); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	js, err := indexDecoder().DecodeAll(body, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: the index at byte %d is %w: its zstd frame does not decompress (zstd: %v)", name, off, ErrCorrupt, err)
	}
	s := &Store{r: r, name: name, end: int64(off)}
	if err := json.Unmarshal(js, &s.Index); err != nil {
		return nil, fmt.Errorf("%s: the index at byte %d is %w: it decompresses, but not to a trace index (%v)", name, off, ErrCorrupt, err)
	}
	if err := s.check(); err != nil {
		return nil, bad(err.Error())
	}
	return s, nil
}

// check verifies that the index is consistent with the file, so that
// reading a damaged store fails with an error rather than a panic.
func (s *Store) check() error {
	ix := &s.Index
	if ix.Version != StoreVersion {
		return fmt.Errorf("index version %d, this maple reads version %d", ix.Version, StoreVersion)
	}
	var next int64
	for i, b := range ix.Blocks {
		// next ≤ end holds by induction, so end − next cannot overflow where
		// next + Length could (a crafted Length near 2⁶³ would wrap).
		if b.Offset != next || b.Length <= 0 || b.Length > s.end-next {
			return fmt.Errorf("block %d (offset %d, length %d) out of place: the blocks before it end at byte %d, the index starts at byte %d", i, b.Offset, b.Length, next, s.end)
		}
		next += b.Length
		if b.Bytes < 0 || b.Bytes > maxBlockBytes || b.Records < 0 {
			return fmt.Errorf("block %d at byte %d claims %d records in %d bytes", i, b.Offset, b.Records, b.Bytes)
		}
		if b.Curve < 0 || b.Curve >= len(ix.Curves) {
			return fmt.Errorf("block %d names curve %d of %d", i, b.Curve, len(ix.Curves))
		}
		if b.Records < 1 || int64(b.Records) > b.Bytes {
			return fmt.Errorf("block %d at byte %d claims %d records in %d bytes", i, b.Offset, b.Records, b.Bytes)
		}
		if b.MinRound > b.MaxRound || !(b.MinTime <= b.MaxTime) {
			return fmt.Errorf("block %d at byte %d claims rounds %d–%d and times %v–%v", i, b.Offset, b.MinRound, b.MaxRound, b.MinTime, b.MaxTime)
		}
		if err := ascending(b.Actors, len(ix.Actors)); err != nil {
			return fmt.Errorf("block %d names actors %v of %d: %v", i, b.Actors, len(ix.Actors), err)
		}
		if err := ascending(b.Types, len(ix.Types)); err != nil {
			return fmt.Errorf("block %d names types %v of %d: %v", i, b.Types, len(ix.Types), err)
		}
	}
	if next != s.end {
		return errors.New("blocks do not end at the index")
	}
	for _, t := range []struct {
		what  string
		names []string
	}{{"actors", ix.Actors}, {"types", ix.Types}} {
		if !slices.IsSorted(t.names) || len(slices.Compact(slices.Clone(t.names))) != len(t.names) {
			return fmt.Errorf("the index's %s are not sorted and distinct", t.what)
		}
	}
	return nil
}

// ascending checks that refs are positions in a table of n names, ascending
// and distinct, as StoreWriter writes them.
func ascending(refs []int, n int) error {
	for k, r := range refs {
		switch {
		case r < 0 || r >= n:
			return fmt.Errorf("position %d out of range", r)
		case k > 0 && r <= refs[k-1]:
			return errors.New("not ascending")
		}
	}
	return nil
}

// Scan calls fn for every record that f matches, in the store's order,
// decompressing only the blocks whose index entry shows they can hold such
// a record. Returning ErrStop from fn ends the scan without error.
func (s *Store) Scan(f Filter, fn func(*Record) error) error {
	var blocks []int
	for i := range s.Index.Blocks {
		if f.mayMatch(&s.Index, &s.Index.Blocks[i]) {
			blocks = append(blocks, i)
		}
	}
	// Blocks are decoded on every core, a few ahead of the one being
	// delivered; fn sees the records in store order on this goroutine.
	workers := runtime.GOMAXPROCS(0)
	results := make([]chan decoded, len(blocks))
	for k := range results {
		results[k] = make(chan decoded, 1)
	}
	// The feeder hands out blocks in order, each after taking a token that
	// the delivery loop returns once the block is delivered: at most
	// 2·workers blocks are decoded ahead, and the next block to deliver
	// always holds a token.
	next := make(chan int)
	done := make(chan struct{})
	defer close(done)
	tokens := make(chan struct{}, 2*workers)
	go func() {
		defer close(next)
		for k := range blocks {
			select {
			case tokens <- struct{}{}:
			case <-done:
				return
			}
			select {
			case next <- k:
			case <-done:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for k := range next {
				results[k] <- s.decode(blocks[k], f)
			}
		}()
	}
	for k := range blocks {
		d := <-results[k]
		<-tokens
		if d.err != nil {
			return d.err
		}
		for i := range d.recs {
			if err := fn(&d.recs[i]); errors.Is(err, ErrStop) {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

// decoded is a block's records that a filter matches, or the error reading
// it.
type decoded struct {
	recs []Record
	err  error
}

// decode reads, decompresses and decodes block i, keeping what f matches.
func (s *Store) decode(i int, f Filter) decoded {
	b := &s.Index.Blocks[i]
	where := fmt.Sprintf("%s: block %d at byte %d", s.name, i, b.Offset)
	frame := make([]byte, b.Length)
	if _, err := s.r.ReadAt(frame, b.Offset); err != nil {
		return decoded{err: fmt.Errorf("%s: %w", where, err)}
	}
	// Decoding into exactly the size the index records bounds the memory a
	// damaged frame header can claim, and a size that differs is damage.
	raw, err := blockDecoder().DecodeAll(frame, make([]byte, 0, b.Bytes))
	if err != nil {
		return decoded{err: fmt.Errorf("%s (%d bytes) is %w: its zstd frame does not decompress into the %d bytes the index records (zstd: %v)", where, b.Length, ErrCorrupt, b.Bytes, err)}
	}
	if int64(len(raw)) != b.Bytes {
		return decoded{err: fmt.Errorf("%s (%d bytes) is %w: it decompresses to %d bytes, the index says %d", where, b.Length, ErrCorrupt, len(raw), b.Bytes)}
	}
	var d decoded
	d.err = s.readLines(raw, b, where, f, func(r *Record) error {
		d.recs = append(d.recs, *r)
		return nil
	})
	return d
}

// readLines decodes the JSON lines of raw, the records of block b, and calls
// fn for those f matches. It checks the block against its index entry — as
// many records as it says, each of its run and curve, within its ranges of
// rounds and times, of its types and between its actors, and, when every
// line was decoded, every listed type and actor present — so that an index
// that was altered (a count, a name) is reported, not believed: filters
// select blocks by the index alone.
func (s *Store) readLines(raw []byte, b *Block, name string, f Filter, fn func(*Record) error) error {
	ix := &s.Index
	types, actors := make(map[string]int, len(b.Types)), make(map[string]int, len(b.Actors))
	for k, t := range b.Types {
		types[ix.Types[t]] = k
	}
	for k, a := range b.Actors {
		actors[ix.Actors[a]] = k
	}
	seenTypes, seenActors := make([]bool, len(b.Types)), make([]bool, len(b.Actors))
	skipped := false
	line := 0
	for ; len(raw) > 0; line++ {
		n := bytes.IndexByte(raw, '\n')
		if n < 0 {
			n = len(raw)
		}
		text := raw[:n]
		raw = raw[min(n+1, len(raw)):]
		if r, ok := roundOf(text); ok && len(f.Rounds) > 0 && !slices.Contains(f.Rounds, r) {
			if r < b.MinRound || r > b.MaxRound {
				return fmt.Errorf("%s, line %d of the block: round %d, outside the rounds %d–%d the index gives the block", name, line+1, r, b.MinRound, b.MaxRound)
			}
			skipped = true
			continue // the common seek, without decoding the line
		}
		var rec Record
		if err := json.Unmarshal(text, &rec); err != nil {
			return fmt.Errorf("%s is %w: line %d of the block is not a trace record (%v)", name, ErrCorrupt, line+1, err)
		}
		if err := b.holds(&rec, ix, types, actors, seenTypes, seenActors); err != nil {
			return fmt.Errorf("%s, line %d of the block: %v: the index does not describe the block", name, line+1, err)
		}
		if !f.Match(&rec) {
			continue
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
	if line != b.Records {
		return fmt.Errorf("%s: %d records, the index says %d", name, line, b.Records)
	}
	if !skipped {
		if k := slices.Index(seenTypes, false); k >= 0 {
			return fmt.Errorf("%s: no record of type %s, which the index lists for the block", name, ix.Types[b.Types[k]])
		}
		if k := slices.Index(seenActors, false); k >= 0 {
			return fmt.Errorf("%s: no record from or to %s, whom the index lists for the block", name, ix.Actors[b.Actors[k]])
		}
	}
	return nil
}

// holds checks that rec is one of the records b's index entry describes:
// its run and curve, within its rounds and times, of one of its types
// (positions in types) and between its actors (positions in actors). It
// marks the type and actors seen.
func (b *Block) holds(rec *Record, ix *Index, types, actors map[string]int, seenTypes, seenActors []bool) error {
	switch {
	case rec.Run != b.Run || rec.Curve != ix.Curves[b.Curve]:
		return fmt.Errorf("a record of run %d of curve %q in the block of run %d of curve %q", rec.Run, rec.Curve, b.Run, ix.Curves[b.Curve])
	case rec.Round < b.MinRound || rec.Round > b.MaxRound:
		return fmt.Errorf("round %d, outside the block's rounds %d–%d", rec.Round, b.MinRound, b.MaxRound)
	case !(rec.Time >= b.MinTime && rec.Time <= b.MaxTime):
		return fmt.Errorf("time %v, outside the block's times %v–%v", rec.Time, b.MinTime, b.MaxTime)
	}
	t, ok := types[rec.Type]
	if !ok {
		return fmt.Errorf("type %s, which the index does not list for the block", rec.Type)
	}
	seenTypes[t] = true
	for _, name := range []string{rec.From, rec.To} {
		a, ok := actors[name]
		if !ok {
			return fmt.Errorf("actor %s, whom the index does not list for the block", name)
		}
		seenActors[a] = true
	}
	return nil
}

// roundKey is the record's round field as Writer encodes it. Its first
// occurrence in a line is the record's own round: the fields before it (seq,
// run, curve, t) cannot contain it, a quote inside the curve string being
// escaped.
var roundKey = []byte(`"round":`)

// roundOf reads the round of an encoded record without decoding it.
func roundOf(line []byte) (int, bool) {
	i := bytes.Index(line, roundKey)
	if i < 0 {
		return 0, false
	}
	line = line[i+len(roundKey):]
	j := 0
	for j < len(line) && (line[j] == '-' || line[j] >= '0' && line[j] <= '9') {
		j++
	}
	r, err := strconv.Atoi(string(line[:j]))
	return r, err == nil
}

// ErrStop, returned by a Scan callback, ends the scan early without error.
var ErrStop = errors.New("stop scanning")

// Concat writes to w one store holding the records of the stores srcs, in
// order: their blocks are copied as they are, without recompressing, and
// their indexes merged. The stores must hold different runs.
func Concat(w io.Writer, srcs []*Store) error {
	merged := Index{Version: StoreVersion}
	curves, actors, types := map[string]int{}, map[string]int{}, map[string]int{}
	for _, s := range srcs {
		for _, c := range s.Index.Curves {
			if _, ok := curves[c]; !ok {
				curves[c] = len(merged.Curves)
				merged.Curves = append(merged.Curves, c)
			}
		}
		for _, a := range s.Index.Actors {
			intern(actors, a)
		}
		for _, t := range s.Index.Types {
			intern(types, t)
		}
	}
	var off int64
	for _, s := range srcs {
		if _, err := io.Copy(w, io.NewSectionReader(s.r, 0, s.end)); err != nil {
			return err
		}
		for _, b := range s.Index.Blocks {
			b.Offset += off
			b.Curve = curves[s.Index.Curves[b.Curve]]
			b.Actors = remap(b.Actors, s.Index.Actors, actors)
			b.Types = remap(b.Types, s.Index.Types, types)
			merged.Blocks = append(merged.Blocks, b)
		}
		off += s.end
	}
	merged.Actors = sortedTable(actors, merged.Blocks, func(b *Block) []int { return b.Actors })
	merged.Types = sortedTable(types, merged.Blocks, func(b *Block) []int { return b.Types })
	return writeIndex(w, off, &merged)
}

// remap translates positions in the table from to positions in the table to.
func remap(refs []int, from []string, to map[string]int) []int {
	out := make([]int, len(refs))
	for i, r := range refs {
		out[i] = to[from[r]]
	}
	return out
}

// mayMatch reports whether block b can hold a record f matches.
func (f Filter) mayMatch(ix *Index, b *Block) bool {
	if len(f.Runs) > 0 && !slices.Contains(f.Runs, b.Run) {
		return false
	}
	if f.Curve != "" && ix.Curves[b.Curve] != f.Curve {
		return false
	}
	if len(f.Rounds) > 0 && !slices.ContainsFunc(f.Rounds, func(r int) bool { return r >= b.MinRound && r <= b.MaxRound }) {
		return false
	}
	if f.Since != nil && b.MaxTime < *f.Since || f.Until != nil && b.MinTime > *f.Until {
		return false
	}
	has := func(refs []int, table []string, names []string) bool {
		if len(names) == 0 {
			return true
		}
		for _, r := range refs {
			if slices.Contains(names, table[r]) {
				return true
			}
		}
		return false
	}
	return has(b.Types, ix.Types, f.Types) && has(b.Actors, ix.Actors, f.Actors) &&
		has(b.Actors, ix.Actors, f.From) && has(b.Actors, ix.Actors, f.To)
}
