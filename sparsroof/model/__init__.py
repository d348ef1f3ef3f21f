"""The traffic and bound models: bytes of A per storage format, bytes of B per reuse
model, the traffic of one kernel, its speed-of-light bound on a spec, and the Ridgeline
model of a kernel split over ranks."""
