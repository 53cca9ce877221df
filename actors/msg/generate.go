// Package msg defines the protobuf messages actors exchange. The Go code is
// generated from the .proto files beside this one and committed; regenerate it
// with `go generate ./actors/msg` (needs protoc on PATH; the Go plugin is a
// tool pinned in go.mod).
package msg

//go:generate sh -c "protoc --plugin=protoc-gen-go=\"$(go tool -n protoc-gen-go)\" --go_out=. --go_opt=paths=source_relative *.proto"
