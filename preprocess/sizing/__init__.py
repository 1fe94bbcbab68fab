"""How big a build is and what each job asks for, before it runs: the measured per-item costs
(`costs`), the items of each conversion (`counts`), one job's threads, memory and runtime (`resources`), how
many jobs a conversion is cut into (`shards`), the per-conversion estimates (`estimate`), the whole build's
budget on N cores (`budget`) and their text tables (`report`). It reads the registry and the raw root's file
lists; it never converts, checks or writes anything."""
