/*
 * elf_info.h -- what `pagehome run` reads of a program's ELF file (and of
 * the library that would answer for its libgomp.so.1) before it starts it.
 */
#ifndef PH_TOOLS_ELF_INFO_H
#define PH_TOOLS_ELF_INFO_H

#define ELF_MAX_VERSIONS 64

/* Dynamic (has PT_INTERP), its OpenMP runtime from DT_NEEDED ("libgomp",
 * "libomp", "" none), the version names it needs of libgomp.so.1
 * (DT_VERNEED; weak ones left out: the loader forgives them) and those it
 * defines (DT_VERDEF: a library; its own name left out).  At most
 * ELF_MAX_VERSIONS of each, every string NUL-terminated. */
typedef struct elf_info {
    int is_elf, dynamic;
    char omp[32];
    int ngomp_needs, ndefs;
    char gomp_needs[ELF_MAX_VERSIONS][32];
    char defs[ELF_MAX_VERSIONS][32];
} elf_info;

/* Reads path into *info (all zero when it is not a 64-bit ELF file or
 * cannot be read).  The file is not trusted: any content is read safely
 * (tests/fuzz/fuzz_elf.c). */
void elf_inspect(const char *path, elf_info *info);

#endif
