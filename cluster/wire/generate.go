// Package wire defines the protobuf messages a cluster's coordinator and
// workers exchange over protoactor remote. The Go code is generated from
// maple_cluster.proto and committed; regenerate it with `go generate ./cluster/wire`
// (needs protoc on PATH, from the Debian package protobuf-compiler; the Go
// plugin is a tool pinned in go.mod).
package wire

//go:generate sh -c "protoc --plugin=protoc-gen-go=\"$(go tool -n protoc-gen-go)\" --go_out=. --go_opt=paths=source_relative maple_cluster.proto"
