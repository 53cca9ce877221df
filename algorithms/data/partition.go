package data

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"

	"maple/algorithms/rng"
	"maple/internal/enum"
)

// PartitionKind is how a pooled, labelled dataset is dealt to the agents.
type PartitionKind int

const (
	// IID shuffles the samples and deals them in consecutive chunks whose
	// sizes are proportional to draws from [SamplesMin, SamplesMax] (Split).
	IID PartitionKind = iota
	// Dirichlet is label skew: for every class c, the proportions of its
	// samples that go to the K agents are drawn from Dirichlet(α·1_K), the
	// "non-IID-α" of FedLab and Flower Datasets.
	Dirichlet
	// Shards is McMahan et al.'s pathological non-IID split: the samples,
	// sorted by label, are cut into K·s equal shards and every agent gets s
	// of them at random.
	Shards
	// Quantity is quantity skew: IID labels, sizes proportional to
	// log-normal draws.
	Quantity
)

var partitionNames = enum.Of[PartitionKind]("partition", "iid", "dirichlet", "shards", "quantity")

// String returns the scenario-file name of the kind.
func (k PartitionKind) String() string { return partitionNames.String(k) }

// ParsePartition returns the partition kind named s.
func ParsePartition(s string) (PartitionKind, error) { return partitionNames.Parse(s) }

// maxDirichletDraws bounds the redraws of a Dirichlet partition that left an
// agent with fewer than SamplesMin samples (FedLab redraws without bound,
// Flower Datasets ten times).
const maxDirichletDraws = 100

// PartitionConfig describes how one pooled dataset is held out and dealt
// out. The embedded SplitConfig gives the agents, the held-out clean test
// samples and the per-agent feature noise, which every kind applies alike.
type PartitionConfig struct {
	SplitConfig
	// Kind selects the partition.
	Kind PartitionKind
	// Alpha is the Dirichlet concentration α (smaller is more skewed).
	Alpha float64
	// Shards is the number of shards per agent.
	Shards int
	// Sigma is the standard deviation of the log sizes of Quantity.
	Sigma float64
}

// Validate reports the first impossible parameter, naming its field.
func (c PartitionConfig) Validate() error {
	if err := c.SplitConfig.Validate(); err != nil {
		return err
	}
	switch {
	case c.Kind == Dirichlet && (!(c.Alpha > 0) || math.IsInf(c.Alpha, 1)):
		return fmt.Errorf("partition.alpha: must be a finite positive number, got %v", c.Alpha)
	case c.Kind == Shards && c.Shards < 1:
		return fmt.Errorf("partition.shards: must be at least 1, got %d", c.Shards)
	case c.Kind == Quantity && (!(c.Sigma >= 0) || math.IsInf(c.Sigma, 1)):
		return fmt.Errorf("partition.sigma: must be finite and non-negative, got %v", c.Sigma)
	}
	return nil
}

// Partition holds out c.TestSamples clean samples of all exactly as Split
// does (the first of the permutation drawn from the stream ("data",
// "split")), deals the others to c.Agents agents by c.Kind, and adds agent
// k's feature noise from the stream ("data", "agent/k"). IID is Split itself.
// The other kinds draw from the stream ("data", "partition"), so every kind
// holds out the same test set; Dirichlet and Shards need class labels and
// treat every distinct label value as a class. Dirichlet and Quantity give
// every agent at least c.SamplesMin samples (Dirichlet by redrawing, at most
// 100 times); for IID and Shards the sizes follow from the data. The
// returned sets are copies: all is not modified.
func Partition(all *Set, c PartitionConfig, runSeed uint64) (sets []*Set, test *Set, err error) {
	lists, held, err := PartitionIndices(all.Y, c, runSeed)
	if err != nil {
		return nil, nil, err
	}
	sets, test = deal(all, lists, held, c.SplitConfig, runSeed)
	return sets, test, nil
}

// PartitionIndices is Partition on the samples' labels alone: it returns the
// indices of each agent's samples and of the held-out test samples, so that
// a caller holding the features in another form (IDX bytes) builds the sets
// without a copy of the whole dataset.
func PartitionIndices(labels []float64, c PartitionConfig, runSeed uint64) (lists [][]int, held []int, err error) {
	if c.Kind == IID {
		return splitIndices(len(labels), c.SplitConfig, runSeed)
	}
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	if train := len(labels) - c.TestSamples; train < c.Agents {
		return nil, nil, fmt.Errorf(
			"test_samples: holding out %d of %d samples leaves %d for %d agents, fewer than one each",
			c.TestSamples, len(labels), max(train, 0), c.Agents)
	}
	perm := rng.New(runSeed, "data", "split").Perm(len(labels))
	held, train := perm[:c.TestSamples], perm[c.TestSamples:]
	r := rng.New(runSeed, "data", "partition")
	switch c.Kind {
	case Dirichlet:
		lists, err = dirichletLists(labels, train, c, r)
	case Shards:
		lists, err = shardLists(labels, train, c, r)
	default:
		lists, err = quantityLists(train, c, r)
	}
	return lists, held, err
}

// classesOf returns the class of each of the samples idx (the rank of its
// label among the distinct labels) and the number of classes.
func classesOf(labels []float64, idx []int) ([]int, int) {
	values := slices.Clone(labels)
	slices.Sort(values)
	values = slices.Compact(values)
	cls := make([]int, len(idx))
	for i, n := range idx {
		cls[i], _ = slices.BinarySearch(values, labels[n])
	}
	return cls, len(values)
}

// dirichletLists deals train by class: class c's samples, in train order, go
// to the agents in consecutive runs of sizes ⌊N_c·Σ_{j≤k} q_cj⌋ − ⌊N_c·Σ_{j<k} q_cj⌋
// with q_c ~ Dirichlet(α·1_K), as FedLab and Flower Datasets split them; the
// draw is repeated until every agent holds at least SamplesMin samples.
func dirichletLists(labels []float64, train []int, c PartitionConfig, r *rand.Rand) ([][]int, error) {
	cls, classes := classesOf(labels, train)
	byClass := make([][]int, classes)
	for i, n := range train {
		byClass[cls[i]] = append(byClass[cls[i]], n)
	}
	gamma := distuv.Gamma{Alpha: c.Alpha, Beta: 1, Src: r}
	q := make([]float64, c.Agents)
	for draw := 0; draw < maxDirichletDraws; draw++ {
		lists := make([][]int, c.Agents)
		for _, pool := range byClass {
			// Dirichlet(α·1) as normalized independent Gamma(α, 1) draws.
			for k := range q {
				q[k] = gamma.Rand()
			}
			if floats.Sum(q) == 0 { // every draw underflowed (α ≪ 0.01)
				q[0] = 1
			}
			floats.Scale(1/floats.Sum(q), q)
			var cum float64
			start := 0
			for k := range q {
				cum += q[k]
				end := min(int(cum*float64(len(pool))), len(pool))
				if k == len(q)-1 {
					end = len(pool)
				}
				end = max(end, start)
				lists[k] = append(lists[k], pool[start:end]...)
				start = end
			}
		}
		if slices.IndexFunc(lists, func(l []int) bool { return len(l) < c.SamplesMin }) < 0 {
			return lists, nil
		}
	}
	return nil, fmt.Errorf("partition.alpha: %d Dirichlet(%v) draws all left some agent with fewer than %d samples (data.samples min); raise alpha or lower data.samples or data.agents",
		maxDirichletDraws, c.Alpha, c.SamplesMin)
}

// shardLists sorts train by class (stably, so within a class in train order),
// cuts it into K·s shards whose sizes differ by at most one, and gives agent
// k the shards of positions k·s … k·s+s−1 of a random permutation.
func shardLists(labels []float64, train []int, c PartitionConfig, r *rand.Rand) ([][]int, error) {
	count := c.Agents * c.Shards
	if len(train) < count {
		return nil, fmt.Errorf("partition.shards: %d agents × %d shards need at least %d training samples, got %d", c.Agents, c.Shards, count, len(train))
	}
	cls, _ := classesOf(labels, train)
	order := make([]int, len(train))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cls[a], cls[b]) })
	sorted := make([]int, len(train))
	for i, o := range order {
		sorted[i] = train[o]
	}
	bounds := make([]int, count+1)
	size, extra := len(train)/count, len(train)%count
	for s := range count {
		bounds[s+1] = bounds[s] + size
		if s < extra {
			bounds[s+1]++
		}
	}
	shards := r.Perm(count)
	lists := make([][]int, c.Agents)
	for k := range lists {
		for _, s := range shards[k*c.Shards : (k+1)*c.Shards] {
			lists[k] = append(lists[k], sorted[bounds[s]:bounds[s+1]]...)
		}
	}
	return lists, nil
}

// quantityLists deals train, in order, in consecutive chunks of sizes
// SamplesMin + a share of the rest proportional to a_k ~ LogNormal(0, σ²),
// floors first and the leftover by largest remainder.
func quantityLists(train []int, c PartitionConfig, r *rand.Rand) ([][]int, error) {
	rest := len(train) - c.Agents*c.SamplesMin
	if rest < 0 {
		return nil, fmt.Errorf("samples: %d agents × data.samples min %d need %d training samples, got %d", c.Agents, c.SamplesMin, c.Agents*c.SamplesMin, len(train))
	}
	ln := distuv.LogNormal{Mu: 0, Sigma: c.Sigma, Src: r}
	weights := make([]float64, c.Agents)
	var sum float64
	for k := range weights {
		weights[k] = ln.Rand()
		sum += weights[k]
	}
	sizes := make([]int, c.Agents)
	rems := make([]float64, c.Agents)
	left := rest
	for k, a := range weights {
		share := float64(rest) * a / sum
		whole := min(int(share), left)
		sizes[k], rems[k] = c.SamplesMin+whole, share-float64(whole)
		left -= whole
	}
	order := make([]int, c.Agents)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rems[b], rems[a]) })
	for i := 0; left > 0; i = (i + 1) % c.Agents {
		sizes[order[i]]++
		left--
	}
	lists := make([][]int, c.Agents)
	start := 0
	for k, n := range sizes {
		lists[k] = train[start : start+n]
		start += n
	}
	return lists, nil
}

// Spread is the minimum, median and maximum of a per-agent count.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// PartitionSummary describes how the samples are spread over the agents, for
// the run summary and `maple data`.
type PartitionSummary struct {
	// Agents is the number of local datasets, Train the samples they hold
	// together and Test the size of the held-out test set.
	Agents int `json:"agents"`
	Train  int `json:"train"`
	Test   int `json:"test"`
	// Samples spreads the agents' sample counts.
	Samples Spread `json:"samples"`
	// Classes spreads the number of distinct classes each agent holds, and
	// Total is the number of classes in all; nil for regression targets.
	Classes *Spread `json:"classes,omitempty"`
	Total   int     `json:"classes_total,omitempty"`
}

// Summarize describes the agents' datasets sets and the test set (nil for
// none). With classes, labels are classes and the summary counts them.
func Summarize(sets []*Set, test *Set, classes bool) PartitionSummary {
	var s Summary
	for _, set := range sets {
		s.Add(set, classes)
	}
	return s.Summary(test, classes)
}

// Summary accumulates the PartitionSummary of datasets added one at a time,
// for sources too large to hold (Source): it keeps how many agents have each
// sample count and each number of distinct classes, and the classes seen,
// not the datasets.
type Summary struct {
	agents, train int
	sizes         map[int]int      // agents by number of samples
	counts        map[int]int      // agents by number of distinct classes
	labels        map[float64]bool // the classes of all agents
}

// Add adds one agent's dataset; with classes, its labels are classes and
// counted.
func (s *Summary) Add(set *Set, classes bool) {
	if s.sizes == nil {
		s.sizes, s.counts, s.labels = map[int]int{}, map[int]int{}, map[float64]bool{}
	}
	s.agents++
	s.train += set.Len()
	s.sizes[set.Len()]++
	if !classes {
		return
	}
	labels := slices.Clone(set.Y)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	s.counts[len(labels)]++
	for _, y := range labels {
		s.labels[y] = true
	}
}

// Summary returns the summary of the datasets added and the test set (nil
// for none); classes must be what Add was given.
func (s *Summary) Summary(test *Set, classes bool) PartitionSummary {
	ps := PartitionSummary{Agents: s.agents, Train: s.train}
	if test != nil {
		ps.Test = test.Len()
	}
	ps.Samples = spreadOf(s.sizes, s.agents)
	if !classes {
		return ps
	}
	ps.Total = len(s.labels)
	spread := spreadOf(s.counts, s.agents)
	ps.Classes = &spread
	return ps
}

// spreadOf returns the spread of n values given by how many times each
// occurs: the minimum, the median (the mean of the two middle values when n
// is even) and the maximum.
func spreadOf(times map[int]int, n int) Spread {
	values := slices.Sorted(maps.Keys(times))
	// at returns the value of rank i (from 0) of the sorted values.
	at := func(i int) float64 {
		for _, v := range values {
			if i < times[v] {
				return float64(v)
			}
			i -= times[v]
		}
		return math.NaN() // i ≥ n: not called
	}
	return Spread{Min: float64(values[0]), Median: (at((n-1)/2) + at(n/2)) / 2, Max: float64(values[len(values)-1])}
}
