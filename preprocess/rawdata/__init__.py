"""Getting the raw data: what a build reads (need), downloading it (fetch, releasefetch), checking a download
(rawcheck) and recording what one holds (register)."""
