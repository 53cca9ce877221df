package data

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"maple/algorithms/data/scatter"
)

// NewScatter returns the scattering transform of the images of an IDX array
// of dimensions N×H×W (checked by IDXLabels), or an error naming the
// images file when the array does not hold two-dimensional images.
func NewScatter(images *IDX, imagesName string, cfg scatter.Config) (*scatter.Transform, error) {
	if len(images.Dims) != 3 {
		return nil, &IDXFileError{Images: true, Err: fmt.Errorf("%s: the scattering transform needs images, an array of dimensions N×H×W; got dimensions %v", imagesName, images.Dims)}
	}
	return scatter.New(images.Dims[1], images.Dims[2], cfg)
}

// transformChunk is how many images a goroutine of IDXTransformed takes at a
// time: enough to make the hand-out's cost nothing beside a millisecond per
// image, few enough to share the last ones out evenly.
const transformChunk = 32

// IDXTransformed returns the dense set of the samples idx of images
// (checked by IDXLabels), with labels y, whose features are the
// coefficients of each image, scaled, through the transform t (built by
// NewScatter for images). The images are transformed on every core, each
// row by one goroutine and as a function of its image alone, so that the
// set is the same bytes whatever GOMAXPROCS. Once ctx is done it stops with
// ctx's error.
func IDXTransformed(ctx context.Context, images *IDX, y []float64, idx []int, scale IDXScale, t *scatter.Transform) (*Set, error) {
	m, pixels := t.Features(), images.Features()
	s := &Set{Dim: m, X: make([]float64, len(idx)*m), Y: make([]float64, len(idx))}
	for i, n := range idx {
		s.Y[i] = y[n]
	}
	var values *[256]float64
	if images.Type == 0x08 {
		values = byteValues(scale)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, runtime.GOMAXPROCS(0))
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws, img := t.NewWorkspace(), make([]float64, pixels)
			for {
				lo := int(next.Add(transformChunk)) - transformChunk
				if lo >= len(idx) {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[g] = err
					return
				}
				for i := lo; i < min(lo+transformChunk, len(idx)); i++ {
					n := idx[i]
					if values != nil {
						decode(img, images.raw[n*pixels:(n+1)*pixels], values)
					} else {
						for j := range img {
							img[j] = images.At(n*pixels + j)
						}
					}
					if err := t.Apply(s.X[i*m:(i+1)*m], img, ws); err != nil {
						errs[g] = err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}
