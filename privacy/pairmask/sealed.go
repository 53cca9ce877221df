package pairmask

// sealed keeps secret material two pointer hops away from every field that
// holds it. When fmt meets a pointer through an unexported field with a verb
// that does not apply to pointers (%s, %x, %q), it prints the pointee
// ("%!s(*T=&{…})"), but it prints the pointers inside that pointee as
// addresses. A type holding a *sealed[T] therefore never prints T, with any
// verb and at any depth, even where its Format method cannot be called.
type sealed[T any] struct {
	v *T
}

func seal[T any](v *T) *sealed[T] { return &sealed[T]{v: v} }
