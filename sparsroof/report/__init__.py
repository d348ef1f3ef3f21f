"""Every table, JSON and CSV document the tool writes, and the only place numbers are
formatted for people."""
