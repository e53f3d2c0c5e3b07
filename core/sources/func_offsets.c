/* SPDX-License-Identifier: GPL-2.0-only */
#include "func_offsets.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* The file offset of an address in section ndx, as libbpf computes it for a
 * uprobe given a function's name. */
static int to_offset(Elf *elf, size_t ndx, uint64_t addr, uint64_t *off)
{
	Elf_Scn *scn = elf_getscn(elf, ndx);
	GElf_Shdr sh;
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
	    addr - sh.sh_addr >= sh.sh_size)
		return -1;
	*off = addr - sh.sh_addr + sh.sh_offset;
	return 0;
}

static size_t scan(Elf *elf, Elf_Scn *scn, const char *const *names, size_t n, uint64_t *offs)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t found = 0;
	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return 0;
	size_t count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
			continue;
		const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		/* Versioned names in .symtab read "name@@VER". */
		size_t len = strcspn(name, "@");
		for (size_t k = 0; k < n; k++) {
			if (offs[k] || strncmp(name, names[k], len) || names[k][len])
				continue;
			if (to_offset(elf, sym.st_shndx, sym.st_value, &offs[k]) == 0)
				found++;
		}
	}
	return found;
}

static Elf *open_elf(const char *path, int *fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return errno = EINVAL, NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(*fd);
		return errno = ENOEXEC, NULL;
	}
	return elf;
}

int xpu_func_offsets(const char *path, const char *const *names, size_t n, uint64_t *offs)
{
	int fd;
	memset(offs, 0, n * sizeof(*offs));
	Elf *elf = open_elf(path, &fd);
	if (!elf)
		return -1;
	size_t found = 0;
	for (int pass = 0; pass < 2 && found < n; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				found += scan(elf, scn, names, n, offs);
		}
	}
	elf_end(elf);
	close(fd);
	return (int)found;
}

static int listed(const uint64_t *offs, size_t n, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		if (offs[i] == off)
			return 1;
	return 0;
}

static size_t scan_prefix(Elf *elf, Elf_Scn *scn, const char *prefix, int exact, uint64_t *offs, size_t n,
			  size_t max)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t plen = strlen(prefix);
	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return n;
	size_t count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < count && n < max; i++) {
		GElf_Sym sym;
		uint64_t off;
		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || strncmp(name, prefix, plen) || strchr(name, '.'))
			continue;
		size_t len = strcspn(name, "@");
		if ((exact && len != plen) || to_offset(elf, sym.st_shndx, sym.st_value, &off) < 0 ||
		    listed(offs, n, off))
			continue;
		offs[n++] = off;
	}
	return n;
}

int xpu_func_offsets_prefix(const char *path, const char *prefix, int exact, uint64_t *offs, size_t max)
{
	int fd;
	Elf *elf = open_elf(path, &fd);
	if (!elf)
		return -1;
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				n = scan_prefix(elf, scn, prefix, exact, offs, n, max);
		}
	}
	elf_end(elf);
	close(fd);
	return (int)n;
}

/* The p_vaddr of the loadable segment that starts the file (p_offset 0): the
 * one whose mapping has file offset 0, where a load base is measured from. */
static int first_load(Elf *elf, uint64_t *vaddr)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*vaddr = ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

static int find_object(Elf *elf, Elf_Scn *scn, const char *name, uint64_t *value)
{
	GElf_Shdr sh;
	Elf_Data *d;
	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return -1;
	size_t count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		const char *s;
		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    !(s = elf_strptr(elf, sh.sh_link, sym.st_name)) || strcmp(s, name))
			continue;
		*value = sym.st_value;
		return 0;
	}
	return -1;
}

int xpu_func_object_offset(const char *path, const char *name, uint64_t *rel)
{
	int fd, rc = -1;
	uint64_t value, base;
	Elf *elf = open_elf(path, &fd);
	if (!elf)
		return -1;
	Elf_Scn *scn = NULL;
	while (rc < 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			rc = find_object(elf, scn, name, &value);
	}
	if (rc == 0 && first_load(elf, &base) == 0 && value >= base)
		*rel = value - base;
	else
		rc = -1, errno = ENOENT;
	elf_end(elf);
	close(fd);
	return rc;
}
