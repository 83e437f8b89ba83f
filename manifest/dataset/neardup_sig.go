package dataset

// The signature: one permutation hashing (Li, Owen and Zhang, "One
// Permutation Hashing", NIPS 2012) puts each shingle hash in one of sigBins
// bins by its high bits and keeps the least low bits per bin; empty bins
// borrow from the next filled bin to their right (densification by
// rotation, Shrivastava and Li, ICML 2014), so two rows agree on a bin with
// probability close to their Jaccard similarity. The bins are cut into
// numBands bands of bandRows; rows that agree on a whole band are
// candidates: at similarity s that happens with probability
// 1 - (1 - s^7)^12, 0.990 at s = 0.85, 0.29 at 0.6 and 0.09 at 0.5.
const (
	bandRows = 7
	numBands = 12
	sigBins  = bandRows * numBands
	emptyBin = ^uint32(0)
)

// binOf places a shingle hash: its bin, and its value in the bin.
func binOf(h uint64) (int, uint32) {
	bin := int((h >> 32) * sigBins >> 32)
	v := uint32(h)
	if v == emptyBin {
		v--
	}
	return bin, v
}

// densify fills every empty bin from the nearest filled bin to its right,
// mixed with the distance (two odd multipliers) so that borrowed values
// differ from the bin they came from. A signature with no filled bin stays as it is.
func densify(sig *[sigBins]uint32) {
	first := -1
	for k, v := range sig {
		if v != emptyBin {
			first = k
			break
		}
	}
	if first < 0 {
		return
	}
	next, dist := sig[first], uint32(0)
	for step := 1; step < sigBins; step++ {
		j := first - step
		if j < 0 {
			j += sigBins
		}
		if sig[j] != emptyBin {
			next, dist = sig[j], 0
			continue
		}
		dist++
		sig[j] = next*0x9e3779b1 ^ dist*0x85ebca77
	}
}

// bandsOf hashes each band of a signature.
func bandsOf(sig *[sigBins]uint32) [numBands]uint32 {
	var out [numBands]uint32
	for b := range out {
		h := uint64(b) + 1
		for _, v := range sig[b*bandRows : (b+1)*bandRows] {
			h = (h ^ uint64(v)) * fnvPrime
		}
		out[b] = uint32(mix64(h))
	}
	return out
}

// rowRec is what the screen keeps of a row during the pass: 20 bytes.
// What its texts are (their exact hash, their band hashes) is learnt in
// the end phase, which reads the rows again once the case-id table is
// gone; item tells whether the row is still the one the pass saw.
type rowRec struct {
	line uint32
	id   uint32 // hash of the case id
	item uint32 // hash of the item's bytes (itemHash); 0: not told again
	lab  rowLabel
}

// signer folds a row's compared texts into its MinHash signature and its
// exact hash; one serves one goroutine.
type signer struct {
	sig   [sigBins]uint32
	exact uint64
	any   bool
}

// reset starts a row.
func (g *signer) reset() {
	for k := range g.sig {
		g.sig[k] = emptyBin
	}
	g.exact, g.any = 0, false
}

// leaf folds one compared text.
func (g *signer) leaf(l *leaf, _ []pathStep) {
	g.any = true
	g.exact += l.exact
	for _, h := range l.shingles {
		bin, v := binOf(h)
		if v < g.sig[bin] {
			g.sig[bin] = v
		}
	}
}

// bands densifies the signature and hashes its bands.
func (g *signer) bands() [numBands]uint32 {
	densify(&g.sig)
	return bandsOf(&g.sig)
}

// rowStore holds rowRecs in fixed blocks, so growing never copies (nor
// briefly doubles) what is already stored.
type rowStore struct {
	blocks [][]rowRec
	n      int
}

const blockRows = 4096

func (s *rowStore) len() int { return s.n }

func (s *rowStore) at(i int) *rowRec { return &s.blocks[i/blockRows][i%blockRows] }

// truncate keeps the first n records.
func (s *rowStore) truncate(n int) {
	keep := (n + blockRows - 1) / blockRows
	clear(s.blocks[keep:])
	s.blocks = s.blocks[:keep]
	s.n = n
}

func (s *rowStore) push() *rowRec {
	if s.n%blockRows == 0 {
		s.blocks = append(s.blocks, make([]rowRec, blockRows))
	}
	s.n++
	return s.at(s.n - 1)
}

// unionFind joins rows into clusters; a cluster's root is its first row.
type unionFind []int32

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = int32(i)
	}
	return u
}

func (u unionFind) find(x int32) int32 {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

func (u unionFind) union(x, y int32) {
	x, y = u.find(x), u.find(y)
	switch {
	case x < y:
		u[y] = x
	case y < x:
		u[x] = y
	}
}

// bitset is a set of row indexes.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
