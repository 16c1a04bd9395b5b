build-clang/lib/records/phone.o: lib/records/phone.c lib/records/phone.h

lib/records/phone.h:
