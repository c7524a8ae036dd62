# Writes the small shell wrapper help2man runs for `lockscope COMMAND` (IN -> OUT, executable).
configure_file(${IN} ${OUT} @ONLY)
file(CHMOD ${OUT} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
     WORLD_READ WORLD_EXECUTE)
