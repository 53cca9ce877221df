package cluster

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/cluster/wire"
)

// handshake runs the greeting of a coordinator holding secret c with a
// worker holding secret w, through the sealed greetings as they travel,
// and returns both ends of the session.
func handshake(t *testing.T, c, w []byte) (coordinator, worker *session) {
	t.Helper()
	cg, err := newGreeter(c)
	if err != nil {
		t.Fatal(err)
	}
	wg, err := newGreeter(w)
	if err != nil {
		t.Fatal(err)
	}
	o, err := newOffer()
	if err != nil {
		t.Fatal(err)
	}
	hello, err := wg.open(cg.seal(&wire.Body{Kind: &wire.Body_Hello{Hello: o.hello(thisBuild())}}, fromCoordinator), fromCoordinator)
	if err != nil {
		t.Fatalf("the worker cannot open the greeting: %v", err)
	}
	worker, key, err := answer(w, hello.GetHello())
	if err != nil {
		t.Fatal(err)
	}
	welcome, err := openWelcome(wg.seal(&wire.Body{Kind: &wire.Body_Welcome{Welcome: &wire.Welcome{Session: worker.id, Key: key}}}, fromWorker), cg)
	if err != nil {
		t.Fatalf("the coordinator cannot open the welcome: %v", err)
	}
	if coordinator, err = o.accept(c, welcome); err != nil {
		t.Fatal(err)
	}
	return coordinator, worker
}

// chunk is a message that carries data.
func chunk(data string) *wire.Body {
	return &wire.Body{Kind: &wire.Body_Chunk{Chunk: &wire.Chunk{Data: []byte(data)}}}
}

// marker stands for a data file's bytes in the messages of these tests.
const marker = "label,feature: 1,0.7182818284 (a private training sample)"

// A session's messages cross in both directions, and what crosses shows
// none of what they carry: the marker is in no byte of the encoded Sealed
// message, as an observer of the link would capture it.
func TestSessionEncryptsBothWays(t *testing.T) {
	c, w := handshake(t, testSecret, testSecret)
	for _, dir := range []struct {
		name     string
		from, to *session
	}{{"coordinator to worker", c, w}, {"worker to coordinator", w, c}} {
		m := dir.from.seal(chunk(marker))
		captured, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(captured, []byte(marker)) || bytes.Contains(captured, []byte("0.7182818284")) {
			t.Errorf("%s: the captured message holds the plaintext", dir.name)
		}
		b, err := dir.to.open(m)
		if err != nil || string(b.GetChunk().GetData()) != marker {
			t.Errorf("%s: opened %v, %v", dir.name, b, err)
		}
	}
}

// A message altered in any field, sealed in another session, reflected to
// its sender, or received a second time does not open; nor does a greeting
// under another secret, or reflected.
func TestSealRefusesForgedAndReplayedMessages(t *testing.T) {
	c, w := handshake(t, testSecret, testSecret)
	m := c.seal(chunk(marker))
	alter := func(f func(m *wire.Sealed)) *wire.Sealed {
		a := proto.Clone(m).(*wire.Sealed)
		f(a)
		return a
	}
	for name, forged := range map[string]*wire.Sealed{
		"a flipped bit of the box":   alter(func(a *wire.Sealed) { a.Box[len(a.Box)/2] ^= 1 }),
		"a flipped bit of the tag":   alter(func(a *wire.Sealed) { a.Box[len(a.Box)-1] ^= 0x80 }),
		"another counter":            alter(func(a *wire.Sealed) { a.Counter++ }),
		"another session id":         alter(func(a *wire.Sealed) { a.Session[0] ^= 1 }),
		"a truncated box":            alter(func(a *wire.Sealed) { a.Box = a.Box[:len(a.Box)-1] }),
		"no box":                     alter(func(a *wire.Sealed) { a.Box = nil }),
		"the box of another message": alter(func(a *wire.Sealed) { a.Box = c.seal(chunk("other")).Box }),
	} {
		if _, err := w.open(forged); !errors.Is(err, errForged) {
			t.Errorf("%s: opened (%v)", name, err)
		}
	}
	if _, err := c.open(m); !errors.Is(err, errForged) {
		t.Errorf("the coordinator opened its own message reflected to it: %v", err)
	}
	other, _ := handshake(t, testSecret, testSecret)
	if _, err := w.open(other.seal(chunk(marker))); !errors.Is(err, errForged) {
		t.Errorf("a message of another session opened: %v", err)
	}
	if _, err := w.open(m); err != nil {
		t.Fatalf("the genuine message did not open after the forgeries: %v", err)
	}
	if _, err := w.open(m); !errors.Is(err, errReplayed) {
		t.Errorf("a message opened twice: %v", err)
	}

	g, _ := newGreeter(testSecret)
	stranger, _ := newGreeter([]byte("another secret, long enough"))
	o, _ := newOffer()
	hello := g.seal(&wire.Body{Kind: &wire.Body_Hello{Hello: o.hello(thisBuild())}}, fromCoordinator)
	if _, err := stranger.open(hello, fromCoordinator); !errors.Is(err, errForged) {
		t.Errorf("a greeting opened under another secret: %v", err)
	}
	if _, err := g.open(hello, fromWorker); !errors.Is(err, errForged) {
		t.Errorf("a coordinator's greeting opened as a worker's: %v", err)
	}
	if _, err := openWelcome(refusal(wire.Refusal_NOT_SEALED, "127.0.0.1:7070"), g); err == nil || err.Error() != "refused: the two do not hold the same cluster secret" {
		t.Errorf("a refusal reads %v", err)
	}
}

// A greeting replayed to a worker opens a session of new keys: what the
// coordinator sends in the first session does not open in the second, so a
// recorded conversation cannot be replayed to a worker by replaying its
// greeting.
func TestReplayedGreetingOpensAnotherSession(t *testing.T) {
	o, err := newOffer()
	if err != nil {
		t.Fatal(err)
	}
	hello := o.hello(thisBuild())
	first, key, err := answer(testSecret, hello)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := answer(testSecret, hello)
	if err != nil {
		t.Fatal(err)
	}
	c, err := o.accept(testSecret, &wire.Welcome{Session: first.id, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	m := c.seal(chunk(marker))
	if _, err := again.open(m); !errors.Is(err, errForged) {
		t.Errorf("a message of the first session opened in the replayed one: %v", err)
	}
	if _, err := first.open(m); err != nil {
		t.Errorf("the first session: %v", err)
	}
	if _, err := o.accept(testSecret, &wire.Welcome{Session: []byte("another session!"), Key: key}); err == nil {
		t.Error("the coordinator accepted a welcome to another session")
	}
	if _, _, err := answer(testSecret, &wire.Hello{Session: hello.Session, Key: make([]byte, 32)}); err == nil {
		t.Error("a worker answered the all-zero (low-order) public key")
	}
}

// Messages sealed at once by many goroutines get distinct counters, 1 to
// their number: no nonce repeats under a key.
func TestConcurrentSealsHaveDistinctNonces(t *testing.T) {
	c, w := handshake(t, testSecret, testSecret)
	const goroutines, each = 8, 200
	counters := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				m := c.seal(chunk("x"))
				counters[g] = append(counters[g], m.Counter)
				if _, err := w.open(m); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	all := slices.Sorted(slices.Values(slices.Concat(counters...)))
	for i, n := range all {
		if n != uint64(i+1) {
			t.Fatalf("counters %v…, want 1 to %d once each", all[:min(len(all), i+2)], goroutines*each)
		}
	}
}

// The replay window accepts exactly the counters a receiver must: each
// counter once, if above zero and within replayWindow of the highest
// accepted, checked against that definition on random sequences that
// reorder, repeat and jump.
func TestWindowAcceptsEachRecentCounterOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		var w window
		seen := map[uint64]bool{}
		top := uint64(0)
		next := uint64(1)
		back := func(d int) uint64 { // next − d, or 0 below 1
			if uint64(d) >= next {
				return 0
			}
			return next - uint64(d)
		}
		for step := range 2000 {
			var n uint64
			switch k := r.IntN(10); {
			case k < 5: // in order
				n = next
				next++
			case k < 7: // late, maybe too late
				n = back(1 + r.IntN(2*replayWindow))
			case k < 9: // a repeat of a recent one
				n = back(1 + r.IntN(8))
			default: // a jump ahead
				next += uint64(r.IntN(3 * replayWindow))
				n = next
				next++
			}
			want := n > 0 && !seen[n] && (n > top || top-n < replayWindow)
			if got := w.accept(n); got != want {
				t.Fatalf("trial %d, step %d: accept(%d) = %v with the highest at %d, want %v", trial, step, n, got, top, want)
			}
			if want {
				seen[n] = true
				top = max(top, n)
			}
		}
	}
}
