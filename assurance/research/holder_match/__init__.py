"""Research: a second face matcher beside dlib's for the holder match, and how to fuse them (issue 44).

Nothing here is imported by the service.
"""
