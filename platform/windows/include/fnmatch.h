/* fnmatch.h (Windows) - declared by platform/windows/compat.h, which the
 * Windows build force-includes. */
