package data

import (
	"math/rand/v2"
	"runtime"
	"sync"

	"maple/algorithms/rng"
)

// Source gives the agents' local datasets one at a time. A generated source
// (RegressionSource, LogisticSource, ClickSource, MixtureSource) holds only
// what the agents share — w⋆, a shared covariance — and draws agent k's
// dataset from the run seed and k alone whenever it is asked, so that a run
// of millions of agents never holds the data of those it does not touch;
// Sets holds datasets in memory (read from files, dealt out by a partition).
type Source interface {
	// Agents returns the number of agents K.
	Agents() int
	// Set returns agent k's dataset, 0 ≤ k < Agents(): the same samples on
	// every call. A generated source returns a new Set each time, which the
	// caller may change or drop; Sets returns the one it holds, which must
	// not be changed. Set is safe for concurrent use.
	Set(k int) *Set
}

// A Drawer is a generated Source that can draw an agent's dataset into
// storage the caller reuses, so that a pass over millions of agents
// allocates no dataset per agent (Fold).
type Drawer interface {
	Source
	// DrawTo returns agent k's dataset, the samples Set(k) returns, drawn
	// into dst's storage when the source draws it (then it returns dst,
	// reusing dst's slices when they are long enough), or a set the source
	// holds. The caller must not change the set returned.
	DrawTo(k int, dst *Set) *Set
}

// drawTo returns agent k's dataset of src, drawn into dst when src is a
// Drawer.
func drawTo(src Source, k int, dst *Set) *Set {
	if d, ok := src.(Drawer); ok {
		return d.DrawTo(k, dst)
	}
	return src.Set(k)
}

// Sets is a Source holding every dataset in memory.
type Sets []*Set

// Agents implements Source.
func (s Sets) Agents() int { return len(s) }

// Set implements Source.
func (s Sets) Set(k int) *Set { return s[k] }

// Collect returns every dataset of src, in agent order (src itself if it is
// Sets).
func Collect(src Source) Sets {
	if s, ok := src.(Sets); ok {
		return s
	}
	sets := make(Sets, src.Agents())
	for k := range sets {
		sets[k] = src.Set(k)
	}
	return sets
}

// Generated reports whether src draws its datasets when asked rather than
// holding them: a generated source holds a few vectors whatever its number
// of agents.
func Generated(src Source) bool {
	_, held := src.(Sets)
	return !held
}

// Replace returns src with agent k's dataset replaced by set.
func Replace(src Source, k int, set *Set) Source { return replaced{src, k, set} }

type replaced struct {
	Source
	k   int
	set *Set
}

// Set implements Source.
func (r replaced) Set(k int) *Set {
	if k == r.k {
		return r.set
	}
	return r.Source.Set(k)
}

// DrawTo implements Drawer, drawing into dst when the replaced source does.
func (r replaced) DrawTo(k int, dst *Set) *Set {
	if k == r.k {
		return r.set
	}
	return drawTo(r.Source, k, dst)
}

// eachChunk is the number of consecutive agents one goroutine of Each
// generates at a time: large enough that handing a chunk over costs little
// next to drawing it, small enough that the chunks drawn ahead (two per
// core) hold a negligible share of the data.
const eachChunk = 256

// Each calls f(k, src.Set(k)) for every agent k in ascending order, on the
// calling goroutine, and stops at the first error f returns. For a generated
// source the datasets are drawn ahead on every core (at most two chunks of
// eachChunk agents per core), so that a pass over millions of generated
// agents takes the time of drawing them divided by the cores; the order of
// the calls, hence every number f computes, is that of a plain loop. The
// datasets of a Drawer are drawn into storage that is reused (Fold): f must
// neither change a dataset nor keep it beyond the call.
func Each(src Source, f func(k int, set *Set) error) error {
	return Fold(src, func(int, []*Set, []struct{}) {}, func(k int, set *Set, _ *struct{}) error { return f(k, set) })
}

// foldChunk is a chunk of Fold: agents lo … lo+len(sets)−1, the storage
// their datasets are drawn into and their results.
type foldChunk[T any] struct {
	lo    int
	store []Set
	sets  []*Set
	out   []T
	done  chan struct{} // work is done
}

// fill draws the chunk's datasets, agents lo … hi−1 of src, and runs work
// on them.
func (c *foldChunk[T]) fill(src Source, lo, hi int, work func(lo int, sets []*Set, out []T)) {
	c.lo = lo
	c.sets, c.out = c.sets[:hi-lo], c.out[:hi-lo]
	for i := range c.sets {
		c.sets[i] = drawTo(src, lo+i, &c.store[i])
	}
	work(lo, c.sets, c.out)
}

// newFoldChunk returns a chunk of eachChunk agents' storage.
func newFoldChunk[T any]() *foldChunk[T] {
	return &foldChunk[T]{
		store: make([]Set, eachChunk), sets: make([]*Set, eachChunk),
		out: make([]T, eachChunk), done: make(chan struct{}, 1),
	}
}

// Fold passes over the agents of src once, for a pass that would
// otherwise allocate for every agent: work(lo, sets, out) computes the
// results of a chunk of consecutive agents lo, lo+1, … (eachChunk of them,
// fewer for the last chunk) into out, on some goroutine, and each(k, set,
// &v) then takes every agent's dataset and result on the calling goroutine,
// in ascending agent order, stopping at its first error.
//
// The datasets of a Drawer are drawn into storage that Fold reuses once
// each has taken them, as it reuses the results: out holds what an earlier
// chunk left there, so work must set whatever each reads. Neither may
// change a dataset, nor keep it, or a result's storage, beyond the call.
// With more than one core and more than one chunk, the chunks are drawn
// and worked on every core (at most two chunks per core ahead of each);
// work must then be safe for concurrent use. When work depends only on lo
// and the datasets, as it must, the chunks being the same whatever the
// number of cores, what each computes is that of a plain loop, bit for bit.
func Fold[T any](src Source, work func(lo int, sets []*Set, out []T), each func(k int, set *Set, v *T) error) error {
	K := src.Agents()
	workers := runtime.GOMAXPROCS(0)
	if workers == 1 || K <= eachChunk {
		c := newFoldChunk[T]()
		for lo := 0; lo < K; lo += eachChunk {
			c.fill(src, lo, min(lo+eachChunk, K), work)
			for i, set := range c.sets {
				if err := each(lo+i, set, &c.out[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	n := 2 * workers
	free := make(chan *foldChunk[T], n)
	for range n {
		free <- newFoldChunk[T]()
	}
	order := make(chan *foldChunk[T], n) // dispatched, in agent order
	jobs := make(chan *foldChunk[T], n)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				c.fill(src, c.lo, min(c.lo+eachChunk, K), work)
				c.done <- struct{}{}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(order)
		for lo := 0; lo < K; lo += eachChunk {
			var c *foldChunk[T]
			select {
			case <-stop:
				return
			default:
			}
			select {
			case c = <-free:
			case <-stop:
				return
			}
			c.lo = lo
			order <- c // never blocks: at most n chunks exist
			jobs <- c
		}
	}()
	var err error
	for c := range order {
		<-c.done
		if err == nil {
			for i, set := range c.sets {
				if err = each(c.lo+i, set, &c.out[i]); err != nil {
					close(stop)
					break
				}
			}
		}
		free <- c // never blocks: free holds every chunk at most
	}
	wg.Wait()
	return err
}

// agentStreamPrefix starts the purpose of agent k's data stream, owned by
// "data": the prefix and k.
const agentStreamPrefix = "agent/"

// agentRands recycles the generators the sources draw agents' datasets
// from: each is reseeded with the agent's stream key (ChaCha8.Seed gives
// the generator rand.NewChaCha8 would), so that drawing millions of agents
// allocates no generator.
var agentRands = sync.Pool{New: func() any {
	src := new(rand.ChaCha8)
	return &pooledRand{src: src, Rand: rand.New(src)}
}}

// pooledRand is a generator of agentRands.
type pooledRand struct {
	*rand.Rand
	src *rand.ChaCha8
}

// agentRand returns the stream ("data", "agent/k") of the run with seed
// runSeed; give it back with release once the agent's dataset is drawn.
func agentRand(runSeed uint64, k int) *pooledRand {
	r := agentRands.Get().(*pooledRand)
	r.src.Seed(rng.IndexedKey(runSeed, "data", agentStreamPrefix, 1, k)) // rng.Key(runSeed, "data", "agent/" + k)
	return r
}

// release gives r back to agentRands.
func (r *pooledRand) release() { agentRands.Put(r) }
