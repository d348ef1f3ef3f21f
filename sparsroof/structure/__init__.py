"""What a matrix's pattern looks like: row and column counts, bands, blocks, panels
and N:M groups measured in compiled passes, the power-law fit of the degrees, and the
class a verdict gives it."""
