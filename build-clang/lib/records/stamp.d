build-clang/lib/records/stamp.o: lib/records/stamp.c lib/records/stamp.h

lib/records/stamp.h:
