package bench

import (
	"testing"
)

// Every benchmark is BenchmarkTask/workload=W/impl=I, so benchstat can
// put implementations side by side (-col /impl).

func BenchmarkDecode(b *testing.B)   { benchTask(b, Decode) }
func BenchmarkSkip(b *testing.B)     { benchTask(b, Skip) }
func BenchmarkEncode(b *testing.B)   { benchTask(b, Encode) }
func BenchmarkRoute(b *testing.B)    { benchTask(b, Route) }
func BenchmarkAppProps(b *testing.B) { benchTask(b, AppProps) }

func benchTask(b *testing.B, task string) {
	for _, w := range Workloads() {
		if !anyApplies(task, w) {
			continue
		}
		b.Run("workload="+w.Name, func(b *testing.B) {
			for i := range Impls {
				im := &Impls[i]
				if im.Task != task || !im.Applies(w) {
					continue
				}
				b.Run("impl="+im.Name, func(b *testing.B) { benchOne(b, im, w) })
			}
		})
	}
}

func benchOne(b *testing.B, im *Impl, w *Workload) {
	op := im.New(w)
	defer op.close()
	if err := run(op, 1); err != nil { // warm: grow reusable state
		b.Fatal(err)
	}
	b.SetBytes(int64(len(im.InputOf(w))))
	b.ReportAllocs()
	b.ResetTimer()
	if op.RunN != nil {
		// One call runs the whole loop (in C), so the cgo call is paid
		// once per benchmark run, not per operation.
		if err := op.RunN(b.N); err != nil {
			b.Fatal(err)
		}
		return
	}
	for b.Loop() {
		if err := op.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func run(op Op, n int) error {
	if op.RunN != nil {
		return op.RunN(n)
	}
	for range n {
		if err := op.Run(); err != nil {
			return err
		}
	}
	return nil
}

// TestImpls runs every benchmark body as a test, twice (the second run
// on reused state), and checks that what each implementation read or
// wrote matches the workload: the same value count and digest for every
// decoder, the same bytes or a decodable equivalent for every encoder,
// the same two fields for every router.
func TestImpls(t *testing.T) {
	for _, task := range []string{Decode, Skip, Encode, Route, AppProps} {
		for _, w := range Workloads() {
			for i := range Impls {
				im := &Impls[i]
				if im.Task != task || !im.Applies(w) {
					continue
				}
				t.Run(task+"/workload="+w.Name+"/impl="+im.Name, func(t *testing.T) {
					op := im.New(w)
					defer op.close()
					for range 2 {
						if err := run(op, 1); err != nil {
							t.Fatal(err)
						}
						if err := op.Check(); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// anyApplies reports whether some implementation of task runs on w.
func anyApplies(task string, w *Workload) bool {
	for i := range Impls {
		if Impls[i].Task == task && Impls[i].Applies(w) {
			return true
		}
	}
	return false
}
