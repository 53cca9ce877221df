// Package cluster runs the jobs of a plan — one curve × one Monte-Carlo run
// each — on worker processes, on this host or others, and gathers their
// results so that the runner writes the same run directory as when the jobs
// run in its own process.
//
// It is built on protoactor-go's own cluster and remote packages. Workers
// (StartWorker, `maple worker`) and coordinators (Coordinator, a
// run.Executor behind `maple run --cluster`) are members of maple's
// protoactor cluster. The automanaged provider keeps the membership: each
// member serves a health endpoint, a coordinator polls its workers', and a
// worker that stops answering leaves the cluster, which hands its jobs to
// the others. Jobs, files and results travel as protobuf messages over
// protoactor remote (package wire), each encrypted and authenticated
// (AES-256-GCM) in a session whose keys come from the cluster's shared
// secret and ephemeral X25519 keys (seal.go).
//
// A worker rebuilds its coordinator's plan from the scenario's text, checks
// that it is the same plan, reads only the files the coordinator ships (by
// content hash), and refuses a coordinator of another build, since only the
// same code, toolchain and platform give the same bytes. docs/deployment.md
// tells how to run it on several hosts; docs/design.md how it works.
package cluster
