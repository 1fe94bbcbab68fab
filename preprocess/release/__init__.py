"""The readers of the user's release tree: the task JSON records, the Train_Data JSONLs, the image names they
give, and what DATA_BASEDIR already holds of a subset (holdings)."""
