/* SPDX-License-Identifier: GPL-2.0-only */
#include "func_offsets.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
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

/* Calls match with each defined symbol (and its name) of the sections of type sh_type whose type is
 * in types (a mask of 1 << STT_*), in order, until match returns nonzero; returns that value, or 0
 * when every symbol was seen.  One walker serves the lookups by name, by prefix and of a data object.
 * The type is checked before the name is looked up: libtorch's tables hold 100,000s of symbols. */
typedef int (*sym_match)(Elf *elf, const GElf_Sym *sym, const char *name, void *ctx);

static int walk_symbols(Elf *elf, Elf64_Word sh_type, unsigned types, sym_match match, void *ctx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 1; i < count; i++) {
			GElf_Sym sym;
			const char *name;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= SHN_LORESERVE || !(types & (1u << GELF_ST_TYPE(sym.st_info))) ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			int rc = match(elf, &sym, name, ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}

struct by_name {
	const char *const *names;
	size_t n, found;
	uint64_t *offs;
};

static int match_name(Elf *elf, const GElf_Sym *sym, const char *name, void *ctx)
{
	struct by_name *c = ctx;
	/* Versioned names in .symtab read "name@@VER". */
	size_t len = strcspn(name, "@");
	for (size_t k = 0; k < c->n; k++) {
		if (c->offs[k] || strncmp(name, c->names[k], len) || c->names[k][len])
			continue;
		if (to_offset(elf, sym->st_shndx, sym->st_value, &c->offs[k]) == 0)
			c->found++;
	}
	return c->found == c->n;
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
	struct by_name c = {.names = names, .n = n, .offs = offs};
	for (int pass = 0; pass < 2 && c.found < n; pass++)
		walk_symbols(elf, pass ? SHT_SYMTAB : SHT_DYNSYM, 1u << STT_FUNC | 1u << STT_GNU_IFUNC, match_name,
			     &c);
	elf_end(elf);
	close(fd);
	return (int)c.found;
}

static int listed(const uint64_t *offs, size_t n, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		if (offs[i] == off)
			return 1;
	return 0;
}

/* The file offset a function at off jumps to when that is all it does,
 * else 0.  A jump's displacement is the same in the file as in memory
 * (one segment). */
static uint64_t jump_target(int fd, uint64_t off)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa }, frame[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d };
	uint8_t b[16];
	size_t i = 0;
	if (pread(fd, b, sizeof(b), (off_t)off) != (ssize_t)sizeof(b))
		return 0;
	if (memcmp(b, endbr64, sizeof(endbr64)) == 0)
		i += sizeof(endbr64);
	if (memcmp(b + i, frame, sizeof(frame)) == 0)	/* push %rbp; mov %rsp,%rbp; pop %rbp */
		i += sizeof(frame);
	if (b[i] == 0xe9) {
		int32_t rel;
		memcpy(&rel, b + i + 1, sizeof(rel));
		return off + i + 5 + (uint64_t)(int64_t)rel;
	}
	if (b[i] == 0xeb)
		return off + i + 2 + (uint64_t)(int64_t)(int8_t)b[i + 1];
	return 0;
}

int xpu_func_drop_jumps(const char *path, uint64_t *offs, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), dropped = 0;
	uint64_t *to = fd < 0 ? NULL : calloc(n, sizeof(*to));
	if (!to) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	for (size_t i = 0; i < n; i++)	/* all first: a jump to a jump is one too */
		to[i] = offs[i] ? jump_target(fd, offs[i]) : 0;
	for (size_t i = 0; i < n; i++) {
		if (to[i] && to[i] != offs[i] && listed(offs, n, to[i])) {
			to[i] = UINT64_MAX;
			dropped++;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (to[i] == UINT64_MAX)
			offs[i] = 0;
	free(to);
	close(fd);
	return dropped;
}

struct by_prefix {
	const char *prefix;
	size_t plen, n, max;
	int exact;
	uint64_t *offs;
};

static int match_prefix(Elf *elf, const GElf_Sym *sym, const char *name, void *ctx)
{
	struct by_prefix *c = ctx;
	uint64_t off;
	if (c->n >= c->max)
		return 1;
	if (strncmp(name, c->prefix, c->plen) || strchr(name, '.'))
		return 0;
	size_t len = strcspn(name, "@");
	if ((c->exact && len != c->plen) || to_offset(elf, sym->st_shndx, sym->st_value, &off) < 0 ||
	    listed(c->offs, c->n, off))
		return 0;
	c->offs[c->n++] = off;
	return 0;
}

int xpu_func_offsets_prefix(const char *path, const char *prefix, int exact, uint64_t *offs, size_t max)
{
	int fd;
	Elf *elf = open_elf(path, &fd);
	if (!elf)
		return -1;
	struct by_prefix c = {.prefix = prefix, .plen = strlen(prefix), .max = max, .exact = exact, .offs = offs};
	for (int pass = 0; pass < 2; pass++)
		walk_symbols(elf, pass ? SHT_SYMTAB : SHT_DYNSYM, 1u << STT_FUNC, match_prefix, &c);
	elf_end(elf);
	close(fd);
	return (int)c.n;
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

struct by_object {
	const char *name;
	uint64_t value;
};

static int match_object(Elf *elf, const GElf_Sym *sym, const char *name, void *ctx)
{
	(void)elf;
	struct by_object *c = ctx;
	if (strcmp(name, c->name))
		return 0;
	c->value = sym->st_value;
	return 1;
}

int xpu_func_object_offset(const char *path, const char *name, uint64_t *rel)
{
	int fd, rc = 0;
	uint64_t base;
	struct by_object c = {.name = name};
	Elf *elf = open_elf(path, &fd);
	if (!elf)
		return -1;
	if (walk_symbols(elf, SHT_DYNSYM, 1u << STT_OBJECT, match_object, &c) && first_load(elf, &base) == 0 &&
	    c.value >= base)
		*rel = c.value - base;
	else
		rc = -1, errno = ENOENT;
	elf_end(elf);
	close(fd);
	return rc;
}
