"""How the compiled passes run: whole-array helpers, the routes of a compiled pass (the C
build, numba, numpy) and whether a pass may use a second thread (:mod:`.arrays`), and the
package's one door to numba (:mod:`.compiled`)."""
