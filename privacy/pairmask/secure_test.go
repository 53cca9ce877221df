package pairmask

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"maple/privacy/internal/stattest"
)

// n coordinates per distributional test; see package noise for the choice of
// n = 20000 and α = 0.001 (critical value ≈ 1.95/√n ≈ 0.0138).
const (
	n     = 20000
	alpha = 0.001
	sigma = 0.1 // σ_g of paper 001's regression experiment
)

func keyStream(agent int) *rand.Rand {
	return rand.New(rand.NewChaCha8([32]byte{byte(agent), 'k', 'e', 'y'}))
}

func keyPair(t *testing.T, agent int) *KeyPair {
	t.Helper()
	k, err := NewKeyPair(keyStream(agent))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func shared(t *testing.T, mine *KeyPair, peer *KeyPair) Secret {
	t.Helper()
	s, err := mine.Shared(peer.PublicBytes())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeyPairsAreReproducible(t *testing.T) {
	a, b, c := keyPair(t, 1), keyPair(t, 1), keyPair(t, 2)
	if !bytes.Equal(a.PublicBytes(), b.PublicBytes()) {
		t.Fatal("the same key stream gave different public keys")
	}
	if bytes.Equal(a.PublicBytes(), c.PublicBytes()) {
		t.Fatal("different key streams gave the same public key")
	}
	if len(a.PublicBytes()) != 32 {
		t.Fatalf("public key has %d bytes, want 32", len(a.PublicBytes()))
	}
}

// A node's key pair comes from its key stream, opened only when needed:
// not with operating-system keys, and refused when there is none.
func TestNodeKeyPair(t *testing.T) {
	kp, err := NodeKeyPair(false, func() *rand.Rand { return keyStream(1) })
	if err != nil || !bytes.Equal(kp.PublicBytes(), keyPair(t, 1).PublicBytes()) {
		t.Fatalf("from the key stream: %v, err %v; want the key stream's pair", kp, err)
	}
	opened := false
	if _, err := NodeKeyPair(true, func() *rand.Rand { opened = true; return keyStream(1) }); err != nil || opened {
		t.Errorf("operating-system keys: err %v, key stream opened %v; want neither", err, opened)
	}
	if _, err := NodeKeyPair(false, func() *rand.Rand { return nil }); err == nil {
		t.Error("a node without a key stream got a key pair")
	}
}

// Key pairs from the operating system's randomness differ every time, and
// two of them still agree on one secret, so their masks cancel.
func TestRandomKeyPairs(t *testing.T) {
	a, err := NewRandomKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRandomKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.PublicBytes(), b.PublicBytes()) || bytes.Equal(a.PublicBytes(), keyPair(t, 1).PublicBytes()) {
		t.Fatal("two random key pairs have the same public key")
	}
	ga, gb := make([]float64, 8), make([]float64, 8)
	NewMaskStream(shared(t, a, b)).Fill(ga, Slot{1, 2, 0}, sigma)
	NewMaskStream(shared(t, b, a)).Fill(gb, Slot{1, 2, 0}, sigma)
	if !slices.Equal(ga, gb) {
		t.Fatalf("the two ends of a random pair derive different masks:\n%v\n%v", ga, gb)
	}
}

func TestBothEndsDeriveIdenticalMasks(t *testing.T) {
	l, m := keyPair(t, 1), keyPair(t, 2)
	atL, atM := NewMaskStream(shared(t, l, m)), NewMaskStream(shared(t, m, l))
	gl, gm := make([]float64, 16), make([]float64, 16)
	for _, at := range []Slot{{0, 0, 0}, {3, 17, 2}, {9, 1 << 40, 1}} {
		atL.Fill(gl, at, sigma)
		atM.Fill(gm, at, sigma)
		if !slices.Equal(gl, gm) { // bitwise: the two ends must cancel exactly
			t.Fatalf("slot %+v: masks differ:\n%v\n%v", at, gl, gm)
		}
	}
}

// Changing any component of the slot, or the pair, gives a different mask.
func TestMasksDifferAcrossSlotsAndPairs(t *testing.T) {
	l, m, o := keyPair(t, 1), keyPair(t, 2), keyPair(t, 3)
	ms := NewMaskStream(shared(t, l, m))
	other := NewMaskStream(shared(t, l, o))
	base := Slot{Receiver: 4, Iteration: 10, Stage: 2}
	ref := make([]float64, 8)
	ms.Fill(ref, base, sigma)
	g := make([]float64, 8)
	for _, tc := range []struct {
		name string
		ms   *MaskStream
		at   Slot
	}{
		{"receiver", ms, Slot{5, 10, 2}},
		{"iteration", ms, Slot{4, 11, 2}},
		{"stage", ms, Slot{4, 10, 0}},
		{"pair", other, base},
	} {
		tc.ms.Fill(g, tc.at, sigma)
		if slices.Equal(g, ref) {
			t.Errorf("changing the %s left the mask unchanged", tc.name)
		}
	}
	ms.Fill(g, base, sigma)
	if !slices.Equal(g, ref) {
		t.Error("refilling the same slot gave a different mask")
	}
}

// The per-slot key is exactly crypto/hkdf.Key(SHA-256, secret, "maple/lgh",
// receiver ‖ iteration ‖ stage, 32).
func TestMaskKeyIsHKDF(t *testing.T) {
	s := shared(t, keyPair(t, 1), keyPair(t, 2))
	ms := NewMaskStream(s)
	at := Slot{Receiver: 7, Iteration: 123456, Stage: 1}
	ms.st.v.rekey(at)
	info := make([]byte, 24)
	for i, v := range []int{at.Receiver, at.Iteration, at.Stage} {
		for b := range 8 {
			info[8*i+b] = byte(uint64(v) >> (56 - 8*b))
		}
	}
	want, err := hkdf.Key(sha256.New, s.key.v[:], []byte("maple/lgh"), string(info), 32)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ms.st.v.key[:], want) {
		t.Fatalf("slot key %x, HKDF gives %x", ms.st.v.key, want)
	}
}

func TestFillDoesNotAllocate(t *testing.T) {
	ms := NewMaskStream(OracleSecret(pairStream(1, 2, 3)))
	dst := make([]float64, 32)
	i := 0
	if a := testing.AllocsPerRun(100, func() { i++; ms.Fill(dst, Slot{1, i, 0}, sigma) }); a != 0 {
		t.Fatalf("Fill allocates %v times", a)
	}
}

// Secure-mode masks are Laplace with scale σ/√2: KS at α = 0.001 and the mean
// and variance within 5 standard errors (σ/√n and σ²√(5/n), Laplace kurtosis 6).
func TestSecureMaskIsLaplace(t *testing.T) {
	ms := NewMaskStream(shared(t, keyPair(t, 1), keyPair(t, 2)))
	g := make([]float64, n)
	ms.Fill(g, Slot{Receiver: 3, Iteration: 5}, sigma)
	checkLaplace(t, g, sigma)
}

func checkLaplace(t *testing.T, g []float64, std float64) {
	t.Helper()
	mean, v := stattest.MeanVar(g)
	if se := stattest.MeanSE(std, len(g)); math.Abs(mean) > 5*se {
		t.Errorf("mean %.3g, more than 5 SE (%.3g) from 0", mean, se)
	}
	if se := stattest.VarianceSE(std*std, 6, len(g)); math.Abs(v-std*std) > 5*se {
		t.Errorf("variance %.4g, more than 5 SE (%.3g) from %.4g", v, se, std*std)
	}
	d := stattest.KS(g, distuv.Laplace{Scale: std / math.Sqrt2}.CDF)
	if crit := stattest.KSCritical(len(g), alpha); d > crit {
		t.Errorf("KS D = %.4f > %.4f", d, crit)
	}
}

func TestSharedRejectsBadPeers(t *testing.T) {
	k := keyPair(t, 1)
	if _, err := k.Shared(make([]byte, 31)); err == nil {
		t.Error("Shared accepted a 31-byte public key")
	}
	// u = 0 is a low-order point: the X25519 output is all zeros (RFC 7748 §6.1).
	if _, err := k.Shared(make([]byte, 32)); err == nil {
		t.Error("Shared accepted a low-order public key")
	}
}

// Agreements agree a stream once per peer key, the stream of KeyPair.Shared
// (the same masks bit for bit), and keep no failed agreement.
func TestAgreementsAgreeOncePerKey(t *testing.T) {
	mine, peer, other := keyPair(t, 1), keyPair(t, 2), keyPair(t, 3)
	ag := NewAgreements(mine)
	if !bytes.Equal(ag.PublicBytes(), mine.PublicBytes()) {
		t.Fatal("the agreements' public key is not the key pair's")
	}
	first, err := ag.Stream(peer.PublicBytes())
	if err != nil {
		t.Fatal(err)
	}
	again, err := ag.Stream(slices.Clone(peer.PublicBytes()))
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("the same peer key was agreed twice")
	}
	third, err := ag.Stream(other.PublicBytes())
	if err != nil {
		t.Fatal(err)
	}
	at := Slot{Receiver: 4, Iteration: 2, Stage: 1}
	got, want, fromOther := make([]float64, 5), make([]float64, 5), make([]float64, 5)
	first.Fill(got, at, sigma)
	NewMaskStream(shared(t, peer, mine)).Fill(want, at, sigma)
	third.Fill(fromOther, at, sigma)
	if !slices.Equal(got, want) {
		t.Errorf("the agreed stream's mask %v is not the pair's %v", got, want)
	}
	if slices.Equal(got, fromOther) {
		t.Error("two peers' streams give the same mask")
	}
	for range 2 {
		if _, err := ag.Stream(make([]byte, 32)); err == nil {
			t.Fatal("a low-order peer key was agreed")
		}
	}
	if len(ag.streams) != 2 {
		t.Errorf("%d streams kept, want the 2 agreed", len(ag.streams))
	}
}

func TestOracleSecret(t *testing.T) {
	g1, g2 := make([]float64, 8), make([]float64, 8)
	at := Slot{Receiver: 0, Iteration: 3}
	NewMaskStream(OracleSecret(pairStream(42, 2, 5))).Fill(g1, at, sigma)
	NewMaskStream(OracleSecret(pairStream(42, 5, 2))).Fill(g2, at, sigma)
	if !slices.Equal(g1, g2) {
		t.Fatal("the two ends of an oracle pair disagree")
	}
	for _, s := range []Secret{OracleSecret(pairStream(43, 2, 5)), OracleSecret(pairStream(42, 2, 6))} {
		NewMaskStream(s).Fill(g2, at, sigma)
		if slices.Equal(g1, g2) {
			t.Fatal("oracle masks repeat across run seeds or pairs")
		}
	}
}

// Nothing that holds secret material may print it, with any verb, directly or
// inside a struct (exported or unexported field), and a Secret must refuse JSON.
func TestSecretsDoNotPrint(t *testing.T) {
	kp := keyPair(t, 1)
	s := shared(t, kp, keyPair(t, 2))
	ms := NewMaskStream(s)
	ms.Fill(make([]float64, 1), Slot{}, sigma) // the derived key is now set
	ag := NewAgreements(kp)
	if _, err := ag.Stream(keyPair(t, 2).PublicBytes()); err != nil {
		t.Fatal(err)
	}
	pk := NewPaperKeys(2)
	pk.Draw(Plus, keyStream(3))
	holder := struct {
		Exported   Secret
		hidden     Secret
		stream     *MaskStream
		streamVal  MaskStream
		keys       PaperKeys
		pair       *KeyPair
		pairVal    KeyPair
		Exported2  MaskStream
		ExportedKP KeyPair
		agreed     *Agreements
		AgreedVal  Agreements
	}{s, s, ms, *ms, pk, kp, *kp, *ms, *kp, ag, *ag}

	var out strings.Builder
	for _, v := range []any{s, &s, kp, *kp, ms, *ms, pk, ag, *ag, holder, &holder} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
	}
	printed := out.String()
	prk, err := hkdf.Extract(sha256.New, s.key.v[:], []byte("maple/lgh"))
	if err != nil {
		t.Fatal(err)
	}
	ipad := make([]byte, len(prk))
	for i, b := range prk {
		ipad[i] = b ^ 0x36 // the HMAC inner pad, held by the HMAC state
	}
	for name, b := range map[string][]byte{
		"secret": s.key.v[:], "derived key": ms.st.v.key[:], "private key": kp.priv.v.Bytes(),
		"PRK": prk, "HMAC pad": ipad,
	} {
		for _, enc := range []string{
			fmt.Sprint(b), fmt.Sprintf("%x", b), fmt.Sprintf("%X", b), fmt.Sprintf("%#v", b),
			hex.EncodeToString(b[:8]), base64.StdEncoding.EncodeToString(b), string(b[:8]),
		} {
			if strings.Contains(printed, enc) {
				t.Errorf("the %s appears in formatted output as %q", name, enc)
			}
		}
	}
	for _, v := range *pk.keys.v {
		if strings.Contains(printed, fmt.Sprint(v)) {
			t.Errorf("a paper key %v appears in formatted output", v)
		}
	}
	if got := fmt.Sprintf("%v %+v %#v", s, s, s); got != "[secret] [secret] [secret]" {
		t.Errorf("Secret prints as %q", got)
	}
	if _, err := json.Marshal(s); err == nil {
		t.Error("json.Marshal encoded a Secret")
	}
	if _, err := json.Marshal(holder); err == nil {
		t.Error("json.Marshal encoded a struct holding a Secret")
	}
}

func TestZeroSecretPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewMaskStream accepted the zero Secret")
		}
	}()
	NewMaskStream(Secret{})
}

func BenchmarkMaskStreamFill(b *testing.B) {
	ms := NewMaskStream(OracleSecret(pairStream(1, 2, 3)))
	dst := make([]float64, 2)
	i := 0
	for b.Loop() {
		i++
		ms.Fill(dst, Slot{Receiver: 1, Iteration: i}, sigma)
	}
}
