package cluster

import (
	"bytes"
	"fmt"
	"os"

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
