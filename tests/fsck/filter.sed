# Volatile parts of fsck-lanyfs output: the version.
s/^fsck-lanyfs [0-9][0-9.]*$/fsck-lanyfs VERSION/
