package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"

	"maple/cluster/wire"
	"maple/internal/fileio"
)

// MinSecretBytes is the shortest shared secret accepted: 128 bits.
const MinSecretBytes = 16

// MaxSecretFileBytes bounds a secret file: a secret is a line of a few
// dozen characters, and a file far longer (or a device such as /dev/zero)
// is not one.
const MaxSecretFileBytes = 4 << 10

// SecretEnv is the environment variable that holds the cluster's shared
// secret when no secret file is given.
const SecretEnv = "MAPLE_CLUSTER_SECRET"

// ReadSecret returns the cluster's shared secret: the contents of file (a
// trailing newline removed) or, with file empty, the value of SecretEnv. It
// must hold at least MinSecretBytes bytes. The file is read as every input
// is (fileio): a regular file of at most MaxSecretFileBytes, never a named
// pipe or a device. Like ssh with a private key, ReadSecret refuses a file
// that other users may read or change (any permission bit for the group or
// others): whoever reads the secret can run jobs on the workers and read
// the traffic of the cluster.
func ReadSecret(file string) ([]byte, error) {
	var secret []byte
	if file != "" {
		b, err := fileio.ReadFile(file, MaxSecretFileBytes)
		if err != nil {
			return nil, err
		}
		info, err := os.Stat(file)
		if err != nil {
			return nil, err
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			return nil, fmt.Errorf("%s: other users may read or change the secret (permissions %04o); make it private with chmod 600 %s", file, perm, file)
		}
		secret = bytes.TrimRight(b, "\r\n")
	} else {
		secret = []byte(os.Getenv(SecretEnv))
		if len(secret) == 0 {
			return nil, fmt.Errorf("no shared secret: give a secret file or set %s", SecretEnv)
		}
	}
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("the shared secret has %d bytes, fewer than %d (generate one with: head -c 32 /dev/urandom | base64)", len(secret), MinSecretBytes)
	}
	return secret, nil
}

// errForged is the error of a message whose MAC does not match: its sender
// does not hold the cluster's secret, or it was altered on the way.
var errForged = errors.New("message not sealed with the cluster's secret")

// sealer seals and opens messages with the cluster's secret.
type sealer struct{ key []byte }

// seal encodes b and signs it.
func (s sealer) seal(b *wire.Body) *wire.Sealed {
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(b)
	if err != nil {
		panic(fmt.Sprintf("cluster: encoding %T: %v", b.Kind, err)) // every field is encodable
	}
	return &wire.Sealed{Body: body, Mac: s.mac(body)}
}

// open checks m's MAC and decodes its body.
func (s sealer) open(m *wire.Sealed) (*wire.Body, error) {
	if !hmac.Equal(m.Mac, s.mac(m.Body)) {
		return nil, errForged
	}
	b := &wire.Body{}
	if err := proto.Unmarshal(m.Body, b); err != nil {
		return nil, err
	}
	return b, nil
}

func (s sealer) mac(body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write(body)
	return h.Sum(nil)
}
