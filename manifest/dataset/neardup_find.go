package dataset

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gradegate/gradegate/manifest"
	"github.com/gradegate/gradegate/manifest/input"
)

// maxReps bounds the rows one band bucket keeps to compare newcomers with,
// one per cluster seen in it: a bucket that many unrelated rows share (a
// common template) costs at most maxReps checks per row, not one per pair.
const maxReps = 6

// rowText is a candidate row as read again: its shingle set, and each
// compared text's path and shingles, to name the fields in a finding.
type rowText struct {
	id     string
	label  string   // the label field as written, "" when absent
	reason string   // the label's reason, "" when absent
	set    []uint32 // sorted, without repeats
	leaves []leafText
}

// leafText is one compared text of a candidate row: its path, and its
// least shingle hashes, enough to tell whether it shares text with another
// row.
type leafText struct {
	path string
	mins [leafMins]uint32
	n    int
}

const leafMins = 4

type edge struct {
	a, b int32
	sim  float64
}

type cluster struct {
	root     int32
	size     int
	members  []int32 // the first clusterCasesShown rows
	distinct bool    // two case ids differ
	exact    bool    // holds rows with the same normalised text
	near     bool    // holds a pair checked on shingles
	lo, hi   float64 // similarity of the checked pairs
	partner  int32   // a row checked against the root; -1: none
	// labels counts the rows labeled 0 and 1; reasonless counts the
	// labeled rows without a stated reason, shared those whose reason is
	// also given for the other label.
	labels             [2]int
	reasonless, shared int
}

// conflict reports whether the cluster's rows carry both labels without a
// stated reason telling them apart.
func (c *cluster) conflict() bool {
	return c.labels[0] > 0 && c.labels[1] > 0 && (c.reasonless > 0 || c.shared > 0)
}

// Findings reports the clusters of near-duplicate rows, one finding per
// cluster (at most maxClusterFindings, then one that counts the rest), and
// the near_duplicates.fields entries that no item has. The error is a
// failure to read the dataset again.
func (s *Screen) Findings() ([]manifest.Finding, error) {
	if !s.on {
		return nil, nil
	}
	if s.head != nil {
		s.endHead()
	}
	if s.rows.len() == 0 {
		return s.unknownFields(), nil
	}
	// Every row is read again and signed; only the rows with compared
	// text stay.
	exact, bands, spill, err := s.signRows()
	if err != nil {
		return nil, err
	}
	if spill != nil {
		defer spill.close()
	}
	out := s.unknownFields()
	n := s.rows.len()
	if n < 2 {
		return out, nil
	}
	uf := newUnionFind(n)

	// Rows with the same normalised text join at once; only the first of
	// them goes on to the bands.
	dup := newBitset(n)
	named := newBitset(n) // rows a finding may name, read again for their ids
	// The sort buffer, for the exact hashes then the bands: 8 bytes a row
	// (and as many again for each other core, in bandBuckets).
	keys, count := make([]uint64, n), make([]int, 1<<16)
	groupFirsts := exactGroups(n, func(i int) uint64 { return *exact.at(i) }, keys, count, uf, dup, named)
	exact = nil

	// Bands: rows sharing a band's hash are candidates, bucket by bucket.
	buckets := bandBuckets(n, bands, dup, keys, count, sortWorkers(n))
	cand := newBitset(n)
	for _, bk := range buckets {
		for _, x := range bk.members {
			cand.set(int(x))
		}
	}

	// The band hashes and the sort buffer (56 bytes a row) go before the
	// candidates are read.
	bands, keys, count = nil, nil, nil

	// The candidates' shingle sets, all that the checks below compare,
	// are read back from the spill (or, without one, from the dataset)
	// into one arena; the rest of a row's text (its id, label, fields) is
	// read again only for the rows the findings name, at the end.
	var sets *candidateSets
	if spill != nil {
		sets, err = spill.sets(n, cand)
		if err != nil {
			sets = nil // read the dataset again instead
		}
		spill.close()
	}
	if sets == nil {
		var wanted []int32
		for i := range n {
			if cand.has(i) {
				wanted = append(wanted, int32(i))
			}
		}
		sets, err = s.rereadSets(wanted)
		if err != nil {
			return nil, err
		}
	}

	var edges []edge
	reps := make([]int32, 0, maxReps)
	for _, bk := range buckets {
		start := int32(0)
		for _, end := range bk.ends {
			reps = reps[:0]
			for _, x := range bk.members[start:end] {
				tx, ok := sets.of(x)
				if !ok {
					continue
				}
				joined := false
				for _, y := range reps {
					if uf.find(x) == uf.find(y) {
						joined = true
						continue
					}
					if s.rows.at(int(x)).id == s.rows.at(int(y)).id {
						continue // the same case twice: a duplicate_case_id
					}
					ty, _ := sets.of(y)
					small, large := float64(min(len(tx), len(ty))), float64(max(len(tx), len(ty)))
					if small < s.threshold*large {
						continue
					}
					if sim := jaccard(tx, ty); sim >= s.threshold {
						uf.union(x, y)
						edges = append(edges, edge{y, x, sim})
						joined = true
					}
				}
				if !joined && len(reps) < maxReps {
					reps = append(reps, x)
				}
			}
			start = end
		}
	}

	sets = nil
	clusters := s.clusters(uf, edges, groupFirsts)
	texts, err := s.reread(s.shownRows(clusters))
	if err != nil {
		return nil, err
	}
	conflicts := s.conflictFindings(clusters, texts)
	shown := 0
	left, leftCases := 0, 0
	for _, c := range clusters {
		if shown == maxClusterFindings {
			left++
			leftCases += c.size
			continue
		}
		shown++
		out = append(out, s.clusterFinding(c, texts))
	}
	if left > 0 {
		out = append(out, manifest.Finding{
			Code: CodeNearDuplicate, Severity: manifest.SeverityWarn, File: s.file,
			Message: fmt.Sprintf("%d more clusters of near duplicates (%d cases) are not listed", left, leftCases),
		})
	}
	return append(out, conflicts...), nil
}

// conflictFindings reports each cluster whose rows carry different labels
// without different stated reasons (at most maxClusterFindings, then one
// that counts the rest): a hold under gate.require_controls, since such
// labels cannot both be right about what is nearly the same case.
func (s *Screen) conflictFindings(clusters []*cluster, texts map[int32]*rowText) []manifest.Finding {
	sev := manifest.SeverityWarn
	if s.m.Gate.RequireControls {
		sev = manifest.SeverityHold
	}
	var out []manifest.Finding
	left := 0
	for _, c := range clusters {
		if !c.conflict() {
			continue
		}
		if len(out) == maxClusterFindings {
			left++
			continue
		}
		var rows []string
		for _, i := range c.members {
			t := texts[i]
			label := t.label
			if label == "" {
				label = "none"
			}
			reason := "no reason"
			if t.reason != "" {
				reason = "reason " + quoteValue(t.reason)
			}
			rows = append(rows, fmt.Sprintf("%q (line %d) %s %s, %s", t.id, s.rows.at(int(i)).line, s.labelField, label, reason))
		}
		list := strings.Join(rows, "; ")
		if c.size > len(c.members) {
			list += fmt.Sprintf("; and %d more", c.size-len(c.members))
		}
		why := fmt.Sprintf("%d labeled without a reason", c.reasonless)
		if c.reasonless == 0 {
			why = fmt.Sprintf("%d give a reason also given for the other label", c.shared)
		}
		second := c.members[1]
		out = append(out, manifest.Finding{
			Code: CodeNearDuplicateLabelConflict, Severity: sev,
			File: s.file, Line: int(s.rows.at(int(second)).line), CaseID: texts[second].id,
			Message: fmt.Sprintf("%d near-duplicate cases carry different labels (%d labeled 1, %d labeled 0; %s): %s",
				c.size, c.labels[1], c.labels[0], why, list),
		})
	}
	if left > 0 {
		out = append(out, manifest.Finding{
			Code: CodeNearDuplicateLabelConflict, Severity: sev, File: s.file,
			Message: fmt.Sprintf("%d more clusters of near duplicates with different labels are not listed", left),
		})
	}
	return out
}

// bandBucket is one band's buckets of more than one row: bucket k is
// members[ends[k-1]:ends[k]] (from 0 for the first).
type bandBucket struct{ members, ends []int32 }

// sortWorkers is how many cores sort the bands of n rows: one a core, up
// to one a band, and one under 65,536 rows, where a sort takes less than a
// second core's count table (512 KiB, cleared at every sort) would cost.
func sortWorkers(n int) int {
	if n < 1<<16 {
		return 1
	}
	return min(readWorkers(), numBands)
}

// bandBuckets sorts each band's hashes of the rows (0..n-1) not in dup and
// returns, band by band, the buckets of rows that share one. The twelve
// sorts share the cores, one sort buffer a core: keys and count are the
// first's, and each other core's (8 bytes a row) stands in for the exact
// hashes let go just before. Each band's buckets are kept apart, to be
// taken in band order, so what follows is what one core would give.
func bandBuckets(n int, bands blocks[[numBands]uint32], dup bitset, keys []uint64, count []int, workers int) []bandBucket {
	out := make([]bandBucket, numBands)
	var next atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		keys, count := keys, count
		if w > 0 {
			keys, count = make([]uint64, n), make([]int, 1<<16)
		}
		wg.Go(func() {
			for b := int(next.Add(1) - 1); b < numBands; b = int(next.Add(1) - 1) {
				sorted := sortKeys(keys[:n], count, n, func(i int) (uint64, bool) {
					return uint64(bands.at(i)[b])<<32 | uint64(i), !dup.has(i)
				})
				o := &out[b]
				for lo := 0; lo < len(sorted); {
					hi := lo + 1
					for hi < len(sorted) && sorted[hi]>>32 == sorted[lo]>>32 {
						hi++
					}
					if hi-lo > 1 {
						for _, k := range sorted[lo:hi] {
							o.members = append(o.members, int32(uint32(k)))
						}
						o.ends = append(o.ends, int32(len(o.members)))
					}
					lo = hi
				}
			}
		})
	}
	wg.Wait()
	return out
}

// sortKeys sorts the keys key(i) of the rows i in 0..n-1 for which it
// reports true into keys (as long as n), ascending, and returns them. The
// keys are made twice, so that the sort needs no second buffer: once to
// count them by their top 16 bits (count, 1<<16, is scratch), once to put
// each in its bucket; each bucket is then sorted in place. The screen puts
// the row in a key's low bits, so they come out sorted by hash, then row.
func sortKeys(keys []uint64, count []int, n int, key func(i int) (uint64, bool)) []uint64 {
	clear(count)
	m := 0
	for i := range n {
		if k, ok := key(i); ok {
			count[k>>48]++
			m++
		}
	}
	sum := 0
	for d, c := range count {
		count[d] = sum
		sum += c
	}
	keys = keys[:m]
	for i := range n {
		if k, ok := key(i); ok {
			keys[count[k>>48]] = k
			count[k>>48]++
		}
	}
	// count[d] is now where bucket d ends.
	lo := 0
	for _, hi := range count {
		switch {
		case hi-lo > 32:
			slices.Sort(keys[lo:hi])
		case hi-lo > 1:
			insertionSort(keys[lo:hi])
		}
		lo = hi
	}
	return keys
}

// insertionSort sorts a short run of keys; a bucket holds about n/65536.
func insertionSort(keys []uint64) {
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i
		for j > 0 && keys[j-1] > k {
			keys[j] = keys[j-1]
			j--
		}
		keys[j] = k
	}
}

// exactGroups joins the rows (0..n-1) whose exact hashes are equal, marks
// every row but the first of each group in dup and the first
// clusterCasesShown in named, and returns the first rows. keys (as long
// as n) and count are sortKeys' buffers.
//
// The hashes are sorted with the row index in their low bits (8 bytes a
// row, not 16); rows whose high bits agree are then told apart on the
// whole hash.
func exactGroups(n int, exact func(int) uint64, keys []uint64, count []int, uf unionFind, dup, named bitset) []int32 {
	shift := uint(bits.Len(uint(n)))
	mask := uint64(1)<<shift - 1
	keys = sortKeys(keys, count, n, func(i int) (uint64, bool) { return exact(i)>>shift<<shift | uint64(i), true })
	var (
		groupFirsts []int32
		firsts      []int32 // one row per distinct hash in the run
		counts      []int   // rows of each
	)
	grouped := newBitset(n)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && keys[hi]>>shift == keys[lo]>>shift {
			hi++
		}
		firsts, counts = firsts[:0], counts[:0]
		for _, k := range keys[lo:hi] {
			i := int32(k & mask)
			h := exact(int(i))
			f := slices.IndexFunc(firsts, func(f int32) bool { return exact(int(f)) == h })
			if f < 0 {
				firsts, counts = append(firsts, i), append(counts, 1)
				continue
			}
			if counts[f]++; counts[f] <= clusterCasesShown {
				named.set(int(i))
			}
			if !grouped.has(int(firsts[f])) {
				grouped.set(int(firsts[f]))
				named.set(int(firsts[f]))
				groupFirsts = append(groupFirsts, firsts[f])
			}
			uf.union(firsts[f], i)
			dup.set(int(i))
		}
		lo = hi
	}
	return groupFirsts
}

// clusters gathers the rows of every cluster that holds two case ids.
func (s *Screen) clusters(uf unionFind, edges []edge, groupFirsts []int32) []*cluster {
	byRoot := map[int32]*cluster{}
	var all []*cluster
	for i := range int32(s.rows.len()) {
		r := uf.find(i)
		if r == i {
			continue
		}
		c := byRoot[r]
		if c == nil {
			c = &cluster{root: r, size: 1, members: []int32{r}, partner: -1, lo: 1, hi: 0}
			byRoot[r] = c
			all = append(all, c)
		}
		c.size++
		if len(c.members) < clusterCasesShown {
			c.members = append(c.members, i)
		}
		if !c.distinct && s.rows.at(int(r)).id != s.rows.at(int(i)).id {
			c.distinct = true
		}
	}
	// The labels of every row, the root's too; a reason counts as shared
	// when rows of both labels state it.
	var reasons map[int32]map[uint32]uint8 // cluster root → reason → labels stating it
	for i := range int32(s.rows.len()) {
		c := byRoot[uf.find(i)]
		lab := s.rows.at(int(i)).lab
		if c == nil || lab.label < 0 {
			continue
		}
		c.labels[lab.label]++
		if lab.reason == 0 {
			c.reasonless++
			continue
		}
		if reasons == nil {
			reasons = map[int32]map[uint32]uint8{}
		}
		rs := reasons[c.root]
		if rs == nil {
			rs = map[uint32]uint8{}
			reasons[c.root] = rs
		}
		rs[lab.reason] |= 1 << lab.label
	}
	for root, rs := range reasons {
		c := byRoot[root]
		for _, bits := range rs {
			if bits == 3 {
				c.shared++
			}
		}
	}
	for _, e := range edges {
		c := byRoot[uf.find(e.a)]
		c.near = true
		c.lo, c.hi = min(c.lo, e.sim), max(c.hi, e.sim)
		if c.partner < 0 && (e.a == c.root || e.b == c.root) {
			c.partner = e.a + e.b - c.root
		}
	}
	for _, g := range groupFirsts {
		if c := byRoot[uf.find(g)]; c != nil {
			c.exact = true
		}
	}
	all = slices.DeleteFunc(all, func(c *cluster) bool { return !c.distinct })
	// In the order a reader of the file meets them: by the row that first
	// repeats an earlier one, the row the finding points at.
	slices.SortFunc(all, func(a, b *cluster) int { return cmp.Compare(a.members[1], b.members[1]) })
	return all
}

// clusterFinding writes one cluster: its size, the fields its texts match
// on, its similarity and its first cases. It points at the cluster's second
// row, the first that repeats an earlier one.
func (s *Screen) clusterFinding(c *cluster, texts map[int32]*rowText) manifest.Finding {
	var cases []string
	for _, i := range c.members {
		r := s.rows.at(int(i))
		cases = append(cases, fmt.Sprintf("%q (line %d)", texts[i].id, r.line))
	}
	list := strings.Join(cases, ", ")
	if c.size > len(c.members) {
		list += fmt.Sprintf(" and %d more", c.size-len(c.members))
	}
	over := s.matchedPaths(c, texts)
	var msg string
	if c.near {
		hi := c.hi
		if c.exact {
			hi = 1
		}
		sim := fmt.Sprintf("%.2f", c.lo)
		if hs := fmt.Sprintf("%.2f", hi); hs != sim {
			sim += " to " + hs
		}
		msg = fmt.Sprintf("%d cases are near duplicates (similarity %s of %d-word shingles over %s): %s", c.size, sim, shingleWords, over, list)
	} else {
		msg = fmt.Sprintf("%d cases have the same text over %s, ignoring case and white space: %s", c.size, over, list)
	}
	second := c.members[1]
	return manifest.Finding{
		Code: CodeNearDuplicate, Severity: manifest.SeverityWarn,
		File: s.file, Line: int(s.rows.at(int(second)).line), CaseID: texts[second].id,
		Message: msg,
	}
}

// matchedPaths names the fields of the cluster's first row whose texts
// share shingles with the row it was checked against (all its compared
// fields for rows with the same text).
func (s *Screen) matchedPaths(c *cluster, texts map[int32]*rowText) string {
	root := texts[c.root]
	if root == nil {
		return "the compared fields"
	}
	var other []uint32
	if p := texts[c.partner]; c.partner >= 0 && p != nil {
		other = p.set
	}
	var paths []string
	for _, l := range root.leaves {
		if other != nil && !sharesAny(l.mins[:l.n], other) {
			continue
		}
		if !slices.Contains(paths, l.path) {
			paths = append(paths, l.path)
		}
	}
	const shown = 3
	switch {
	case len(paths) == 0:
		return "the compared fields"
	case len(paths) == 1:
		return paths[0]
	case len(paths) <= shown:
		return strings.Join(paths[:len(paths)-1], ", ") + " and " + paths[len(paths)-1]
	default:
		return fmt.Sprintf("%s and %d more fields", strings.Join(paths[:shown], ", "), len(paths)-shown)
	}
}

// shownRows lists, in row order, the rows the findings name and read the
// text of: the first rows, root and partner of each cluster listed, among
// the clusters and among those whose labels conflict.
func (s *Screen) shownRows(clusters []*cluster) []int32 {
	var rows []int32
	add := func(c *cluster) {
		rows = append(rows, c.members...)
		rows = append(rows, c.root)
		if c.partner >= 0 {
			rows = append(rows, c.partner)
		}
	}
	conflicts := 0
	for k, c := range clusters {
		if k < maxClusterFindings {
			add(c)
		}
		if c.conflict() && conflicts < maxClusterFindings {
			conflicts++
			add(c)
		}
	}
	slices.Sort(rows)
	return slices.Compact(rows)
}

// walkRows reads the dataset again and calls fn with each wanted row's
// item, in file order; wanted are indexes into s.rows, in row order.
func (s *Screen) walkRows(wanted []int32, fn func(w int32, rec *rowRec, item []byte) error) error {
	return s.walkLines(len(wanted), func(k int) int32 { return wanted[k] }, func(w int32, rec *rowRec, line []byte) error {
		return fn(w, rec, objectField(line, "item"))
	})
}

// walkLines reads the dataset again and calls fn with each wanted row's
// line, trimmed, in file order: the wanted rows are at(0) to at(n-1),
// indexes into s.rows in row order.
func (s *Screen) walkLines(n int, at func(k int) int32, fn func(w int32, rec *rowRec, line []byte) error) error {
	if n == 0 {
		return nil
	}
	if s.fsys == nil {
		return errors.New("near-duplicate screen: no file system to read the dataset again from")
	}
	f, err := input.Open(s.fsys, s.file, input.Dataset, s.m.Limits.Of(input.Dataset))
	if err != nil {
		return fmt.Errorf("near-duplicate screen: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	lineNo := 1
	for k := range n {
		w := at(k)
		rec := s.rows.at(int(w))
		for lineNo < int(rec.line) {
			if err := skipLine(br); err != nil {
				return s.changed(rec.line, err)
			}
			lineNo++
		}
		line, err = readLine(br, line[:0])
		if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
			return s.changed(rec.line, err)
		}
		lineNo++
		data := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
		if err := fn(w, rec, data); err != nil {
			return err
		}
	}
	return nil
}

// reread reads the dataset again and returns the texts of the wanted rows
// (indexes into s.rows). A row whose item is not the one the pass saw, or
// has no compared text now, is an error: the file changed while it was
// read.
func (s *Screen) reread(wanted []int32) (map[int32]*rowText, error) {
	texts := make(map[int32]*rowText, len(wanted))
	if len(wanted) == 0 {
		return texts, nil
	}
	slices.SortFunc(wanted, func(a, b int32) int {
		return cmp.Compare(s.rows.at(int(a)).line, s.rows.at(int(b)).line)
	})
	interned := map[string]string{}
	var (
		cur      *rowText
		compared bool
	)
	var (
		leafSet, rowSet []uint32 // reused row after row
		pathBuf         []byte
	)
	s.ext.onLeaf = func(l *leaf, path []pathStep) {
		compared = true
		leafSet = leafSet[:0]
		for _, h := range l.shingles {
			leafSet = append(leafSet, uint32(h^h>>32))
		}
		slices.Sort(leafSet)
		leafSet = slices.Compact(leafSet)
		pathBuf = appendPath(pathBuf[:0], path)
		p, ok := interned[string(pathBuf)]
		if !ok {
			p = string(pathBuf)
			interned[p] = p
		}
		lt := leafText{path: p, n: min(len(leafSet), leafMins)}
		copy(lt.mins[:], leafSet)
		cur.leaves = append(cur.leaves, lt)
		rowSet = append(rowSet, leafSet...)
	}
	err := s.walkRows(wanted, func(w int32, rec *rowRec, item []byte) error {
		cur, compared, rowSet = &rowText{}, false, rowSet[:0]
		if !s.ext.item(item) || !compared || !s.same(rec, item) {
			return s.changed(rec.line, nil)
		}
		cur.id = s.caseID(item, rec.line)
		if rec.lab.label >= 0 {
			cur.label = string(bytes.TrimSpace(objectField(item, s.labelField)))
			if raw := objectField(item, s.reasonField); len(raw) > 2 && raw[0] == '"' {
				_, esc := scanString(raw, 0)
				cur.reason = strings.TrimSpace(string(unquote(raw, esc, nil)))
			}
		}
		slices.Sort(rowSet)
		cur.set = slices.Clone(slices.Compact(rowSet))
		texts[w] = cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	return texts, nil
}

// caseID reads a row's case id as the dataset reader does: the id field
// when it is a non-empty string, else "<file>:<line>".
func (s *Screen) caseID(item []byte, line uint32) string {
	if raw := objectField(item, s.idField); len(raw) > 2 && raw[0] == '"' {
		_, esc := scanString(raw, 0)
		return string(unquote(raw, esc, nil))
	}
	return fmt.Sprintf("%s:%d", s.file, line)
}

// same reports whether item is the item the pass saw in rec's row, as
// far as it can tell.
func (s *Screen) same(rec *rowRec, item []byte) bool {
	return rec.item == 0 || s.itemHash(item) == rec.item
}

func (s *Screen) changed(line uint32, err error) error {
	msg := fmt.Sprintf("near-duplicate screen: %s line %d is not what it was on the first read; the file changed", s.file, line)
	if err != nil {
		return fmt.Errorf("%s: %w", msg, err)
	}
	return errors.New(msg)
}

// skipLine reads past the next '\n'.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// readLine appends the next line, without its '\n', to buf.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		b, err := br.ReadSlice('\n')
		buf = append(buf, b...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(buf, []byte("\n")), err
		}
	}
}

// jaccard is |A∩B| / |A∪B| for two sorted sets without repeats.
func jaccard(a, b []uint32) float64 {
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// sharesAny reports whether any of hs is in the sorted set.
func sharesAny(hs, set []uint32) bool {
	for _, h := range hs {
		if _, ok := slices.BinarySearch(set, h); ok {
			return true
		}
	}
	return false
}
