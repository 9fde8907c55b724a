"""One definition per metric, read by every engine."""
