/*
 * elf_info.c -- the ELF reading of `pagehome run` (elf_info.h): program
 * headers, the dynamic section, DT_NEEDED, DT_VERNEED and DT_VERDEF, by
 * pread(2) at offsets checked against the file, never by mapping it.
 * Virtual addresses (DT_STRTAB, DT_VERNEED, DT_VERDEF) become file
 * offsets through the PT_LOAD segments; every loop over file-given links
 * is bounded.
 */
#include "elf_info.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_at(int fd, void *buf, size_t len, off_t off)
{
    return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/* The file offset of virtual address va (in a PT_LOAD segment), or -1. */
static off_t va_offset(const Elf64_Phdr *load, int nload, Elf64_Addr va)
{
    for (int i = 0; i < nload; i++)
        if (va >= load[i].p_vaddr && va < load[i].p_vaddr + load[i].p_filesz)
            return (off_t)(va - load[i].p_vaddr + load[i].p_offset);
    return -1;
}

/* The string at offset off of the string table at stroff, in out. */
static int read_str(int fd, off_t stroff, Elf64_Word off, char *out, size_t len)
{
    memset(out, 0, len);
    return stroff >= 0 && pread(fd, out, len - 1, stroff + (off_t)off) > 0 ? 0 : -1;
}

/* The version names the file needs of libgomp.so.1 (vn at its offset,
 * num entries) into info->gomp_needs. */
static void read_verneed(int fd, off_t vn, Elf64_Xword num, off_t stroff, elf_info *info)
{
    for (Elf64_Xword k = 0; vn >= 0 && k < num && k < 256; k++) {
        Elf64_Verneed need;
        char file[64];
        if (read_at(fd, &need, sizeof need, vn) || read_str(fd, stroff, need.vn_file, file, sizeof file))
            return;
        if (strcmp(file, "libgomp.so.1") == 0) {
            off_t ax = vn + (off_t)need.vn_aux;
            for (unsigned j = 0; j < need.vn_cnt && j < 256; j++) {
                Elf64_Vernaux aux;
                if (read_at(fd, &aux, sizeof aux, ax))
                    return;
                /* a weak need is not fatal to the loader */
                if (!(aux.vna_flags & VER_FLG_WEAK) && info->ngomp_needs < ELF_MAX_VERSIONS &&
                    read_str(fd, stroff, aux.vna_name, info->gomp_needs[info->ngomp_needs],
                             sizeof info->gomp_needs[0]) == 0)
                    info->ngomp_needs++;
                if (!aux.vna_next)
                    break;
                ax += (off_t)aux.vna_next;
            }
        }
        if (!need.vn_next)
            return;
        vn += (off_t)need.vn_next;
    }
}

/* The version names the file defines (vd at its offset, num entries; the
 * first is the file's own name) into info->defs. */
static void read_verdef(int fd, off_t vd, Elf64_Xword num, off_t stroff, elf_info *info)
{
    for (Elf64_Xword k = 0; vd >= 0 && k < num && k < 256; k++) {
        Elf64_Verdef def;
        Elf64_Verdaux aux;
        if (read_at(fd, &def, sizeof def, vd) ||
            read_at(fd, &aux, sizeof aux, vd + (off_t)def.vd_aux))
            return;
        if (!(def.vd_flags & VER_FLG_BASE) && info->ndefs < ELF_MAX_VERSIONS &&
            read_str(fd, stroff, aux.vda_name, info->defs[info->ndefs], sizeof info->defs[0]) == 0)
            info->ndefs++;
        if (!def.vd_next)
            return;
        vd += (off_t)def.vd_next;
    }
}

void elf_inspect(const char *path, elf_info *info)
{
    memset(info, 0, sizeof *info);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    Elf64_Ehdr eh;
    if (read_at(fd, &eh, sizeof eh, 0) != 0 ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phnum > 512) {
        close(fd);
        return;
    }
    info->is_elf = 1;
    Elf64_Phdr dyn = {0};
    Elf64_Phdr load[64];
    int nload = 0;
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (read_at(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize)))
            break;
        if (ph.p_type == PT_INTERP)
            info->dynamic = 1;
        else if (ph.p_type == PT_DYNAMIC)
            dyn = ph;
        else if (ph.p_type == PT_LOAD && nload < 64)
            load[nload++] = ph;
    }
    /* DT_STRTAB, DT_VERNEED and DT_VERDEF are virtual addresses: mapped
     * to file offsets through the PT_LOAD segments */
    size_t ndyn = dyn.p_filesz / sizeof(Elf64_Dyn);
    Elf64_Dyn *d = ndyn && ndyn < 4096 ? calloc(ndyn, sizeof *d) : NULL;
    if (d && read_at(fd, d, ndyn * sizeof *d, (off_t)dyn.p_offset) == 0) {
        Elf64_Addr strtab = 0, verneed = 0, verdef = 0;
        Elf64_Xword nverneed = 0, nverdef = 0;
        for (size_t i = 0; i < ndyn && d[i].d_tag != DT_NULL; i++)
            switch (d[i].d_tag) {
            case DT_STRTAB: strtab = d[i].d_un.d_ptr; break;
            case DT_VERNEED: verneed = d[i].d_un.d_ptr; break;
            case DT_VERNEEDNUM: nverneed = d[i].d_un.d_val; break;
            case DT_VERDEF: verdef = d[i].d_un.d_ptr; break;
            case DT_VERDEFNUM: nverdef = d[i].d_un.d_val; break;
            default: break;
            }
        off_t stroff = va_offset(load, nload, strtab);
        for (size_t i = 0; stroff >= 0 && i < ndyn && d[i].d_tag != DT_NULL; i++) {
            if (d[i].d_tag != DT_NEEDED)
                continue;
            char name[64];
            if (read_str(fd, stroff, (Elf64_Word)d[i].d_un.d_val, name, sizeof name))
                continue;
            if (strncmp(name, "libgomp.so", 10) == 0)
                snprintf(info->omp, sizeof info->omp, "libgomp");
            else if (strncmp(name, "libomp.so", 9) == 0 ||
                     strncmp(name, "libiomp5.so", 11) == 0)
                snprintf(info->omp, sizeof info->omp, "libomp");
        }
        if (verneed)
            read_verneed(fd, va_offset(load, nload, verneed), nverneed, stroff, info);
        if (verdef)
            read_verdef(fd, va_offset(load, nload, verdef), nverdef, stroff, info);
    }
    free(d);
    close(fd);
}

