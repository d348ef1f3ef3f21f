"""What sparsroof keeps between runs: where (:mod:`.folder`, the cache folder that the
structure cache and the compiled kernels use too), and the answers of commands run again
on unchanged inputs (:mod:`.answers`)."""
