"""Values: frozen records, durations, ids, the clock; they import only each other."""
