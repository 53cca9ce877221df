// Package inputs reads and builds what a job of a scenario plan needs
// before its family runs it: the files the scenario names, read from this
// machine's disk or from the files a cluster's coordinator shipped
// (FileSystem, ReadFrom, PlanFiles); the agents' data, generated or read
// from LIBSVM, IDX, CSV or directory files and dealt out by the partition;
// the learning problem built from them (Problem, BuildProblem, the
// ProblemCache a worker keeps, the neighbouring problem of the privacy
// accountant); the network and its combination matrix (Network,
// BuildNetwork); the systems model (SystemsModel); and the privacy fields of
// the pairwise masks (ParseMaskFields).
//
// Every problem with the user's input is a scenario error naming the field
// at fault. The package knows no algorithm family: what depends on one (the
// nodes of the topology, whether data are held lazily) comes from the
// loader's family registry or from the caller. The runner, scenarios/run,
// executes the jobs and imports this package; so do the families.
package inputs
