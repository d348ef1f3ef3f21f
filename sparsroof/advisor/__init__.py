"""The storage-format advisor: the best single format, and the best row partition into
strips of different formats (a dynamic program over strips)."""
