/* SPDX-License-Identifier: GPL-2.0-only */
/* ELF symbol tables: function symbols from .symtab (or a separate debug file
 * found by build-id or .gnu_debuglink) or else .dynsym, the PT_LOAD segments
 * that turn a file offset into a symbol address, and the build-id.
 *
 * The table is an index of (address, size, name offset) only: names stay in
 * the file's string table and are read with pread() when asked for.  A large
 * C++ library's names are most of its symbol table (libtorch_cpu.so: 80 MB of
 * names for 459k functions, against 11 MB of index), and a process uses few
 * of them, so copying them would make the cache hold one library at most.
 * The file stays open (the descriptor given is duplicated) for as long as the
 * table lives; a table is read-only once loaded, so any thread may look up
 * in it and read names from it.
 *
 * Files come from other users and may be truncated or corrupt: libelf checks
 * every section against the file size, and every string and symbol index is
 * checked here before use.  ELF_C_READ (not _MMAP) so a file truncated while
 * we read it gives an error instead of SIGBUS; names read past its end are
 * not names.
 */
#include "symfiles.h"

#include "symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define BUILD_ID_MAX 64

struct seg {
	uint64_t off, vaddr, filesz;
};

struct xpu_elf {
	struct xpu_symtab syms;	/* .name: offset into the string table */
	int fd;			/* the file holding the string table, or -1 */
	uint64_t str_off, str_size;	/* the string table in that file */
	char *str_copy;		/* or a copy of it (an image in memory) */
	int refs;		/* xpu_elf_ref() / xpu_elf_free() */
	struct seg *segs;
	size_t nsegs;
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;
};

static char debug_dir[PATH_MAX] = "/usr/lib/debug";

int xpu_elf_set_debug_dir(const char *dir)
{
	if (strlen(dir) >= sizeof(debug_dir))
		return -ENAMETOOLONG;
	strcpy(debug_dir, dir);
	return 0;
}

static void fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int read_segments(Elf *elf, struct xpu_elf *e)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) < 0)
		return -1;
	e->segs = calloc(n ? n : 1, sizeof(*e->segs));
	if (!e->segs)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return -1;
		if (ph.p_type == PT_LOAD && ph.p_filesz)
			e->segs[e->nsegs++] = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	return 0;
}

/* Copies the NT_GNU_BUILD_ID note of a SHT_NOTE section, if it has one. */
static void note_build_id(Elf_Data *d, uint8_t *id, size_t *len)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz &&
		    nh.n_descsz <= BUILD_ID_MAX) {
			memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
			*len = nh.n_descsz;
			return;
		}
		off = next;
	}
}

static void read_build_id(Elf *elf, uint8_t *id, size_t *len)
{
	Elf_Scn *scn = NULL;
	*len = 0;
	while (!*len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && (d = elf_getdata(scn, NULL)))
			note_build_id(d, id, len);
	}
}

int xpu_elf_fd_build_id(int fd, uint8_t *id, size_t max, size_t *len)
{
	uint8_t buf[BUILD_ID_MAX];
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	*len = 0;
	if (!elf)
		return -1;
	if (elf_kind(elf) == ELF_K_ELF)
		read_build_id(elf, buf, len);
	elf_end(elf);
	if (*len > max)
		*len = 0;
	memcpy(id, buf, *len);
	return *len ? 0 : -1;
}

/* The sections we read symbols and debug-file hints from. */
struct sections {
	Elf_Scn *symtab, *dynsym, *debuglink;
};

static void find_sections(Elf *elf, struct sections *s)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int names = elf_getshdrstrndx(elf, &shstrndx) == 0;
	memset(s, 0, sizeof(*s));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !s->symtab)
			s->symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && !s->dynsym)
			s->dynsym = scn;
		else if (names && sh.sh_type == SHT_PROGBITS &&
			 (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			 strcmp(name, ".gnu_debuglink") == 0)
			s->debuglink = scn;
	}
}

/* An unsized symbol (hand-written assembly, _init) would otherwise run on over
 * everything up to the next symbol, such as the whole PLT: end it with its
 * section. */
static uint64_t implied_size(Elf *elf, const GElf_Sym *sym)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	if (sym->st_size || sym->st_shndx >= SHN_LORESERVE ||
	    !(scn = elf_getscn(elf, sym->st_shndx)) || !gelf_getshdr(scn, &sh) ||
	    sym->st_value < sh.sh_addr || sym->st_value - sh.sh_addr >= sh.sh_size)
		return 0;
	return sh.sh_addr + sh.sh_size - sym->st_value;
}

/* Preference among aliases: sized, then global over weak over local. */
static uint32_t sym_prio(const GElf_Sym *sym)
{
	int bind = GELF_ST_BIND(sym->st_info);
	uint32_t b = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
	return (sym->st_size ? 4u : 0u) | b;
}

static void drop_names(struct xpu_elf *e)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	free(e->str_copy);
	e->str_copy = NULL;
	e->str_off = e->str_size = 0;
}

/* The name at offset off of the string table, without a symbol version
 * ("@@GLIBC_2.34"), into buf; returns its length, 0 when there is none (past
 * the table, unterminated, or the file was cut short under us).  A name
 * longer than buf is cut to fit. */
static size_t read_name(const struct xpu_elf *e, uint64_t off, char *buf, size_t size)
{
	if (off >= e->str_size || size < 2)
		return 0;
	size_t want = e->str_size - off > size - 1 ? size - 1 : (size_t)(e->str_size - off);
	ssize_t n = want;
	if (e->str_copy)
		memcpy(buf, e->str_copy + off, want);
	else
		n = pread(e->fd, buf, want, (off_t)(e->str_off + off));
	if (n <= 0)
		return 0;
	size_t len = strnlen(buf, (size_t)n);
	/* Unterminated: the end of the table (or of the file) came first. */
	if (len == (size_t)n && (len < want || want == e->str_size - off))
		return 0;
	const char *at = memchr(buf, '@', len);
	if (at && at > buf)
		len = (size_t)(at - buf);
	buf[len] = '\0';
	return len;
}

size_t xpu_elf_sym_name(const struct xpu_elf *e, uint32_t i, char *buf, size_t size)
{
	if (i >= e->syms.n) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	size_t n = read_name(e, e->syms.v[i].name, buf, size);
	if (!n && size)
		buf[0] = '\0';
	return n;
}

/* The best of the aliases [i, j) (symbols at one address): the rank of
 * xpu_symtab_name_rank(), then the name that sorts first. */
static uint32_t best_alias(const struct xpu_elf *e, uint32_t i, uint32_t j)
{
	static __thread char a[512], b[512];
	uint32_t best = i, best_rank = 0;
	size_t n = read_name(e, e->syms.v[i].name, a, sizeof(a));
	best_rank = xpu_symtab_name_rank(a, n, e->syms.v[i].rank);
	for (uint32_t k = i + 1; k < j; k++) {
		size_t m = read_name(e, e->syms.v[k].name, b, sizeof(b));
		uint32_t r = xpu_symtab_name_rank(b, m, e->syms.v[k].rank);
		if (r > best_rank || (r == best_rank && strcmp(b, a) < 0)) {
			best = k;
			best_rank = r;
			memcpy(a, b, m + 1);
		}
	}
	return best;
}

static int cmp_start(const void *x, const void *y)
{
	const struct xpu_sym *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* Sorts the index by address and keeps one symbol per address: names are
 * read only for the addresses that have several. */
static void finish(struct xpu_elf *e)
{
	struct xpu_symtab *t = &e->syms;
	if (!xpu_symtab_sorted_unique(t)) {
		qsort(t->v, t->n, sizeof(*t->v), cmp_start);
		uint32_t out = 0;
		for (uint32_t i = 0, j; i < t->n; i = j) {
			for (j = i + 1; j < t->n && t->v[j].start == t->v[i].start;)
				j++;
			t->v[out++] = t->v[j - i > 1 ? best_alias(e, i, j) : i];
		}
		t->n = out;
	}
	xpu_symtab_shrink(t);
}

/* Where the names of one symbol table live. */
struct strtab {
	uint64_t off, size;	/* in the file */
	const char *mem;	/* the section's bytes when the image is in memory */
};

static int add_sym(Elf *elf, const GElf_Sym *sym, const struct strtab *str, struct xpu_symtab *t)
{
	int type = GELF_ST_TYPE(sym->st_info);
	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym->st_shndx == SHN_UNDEF ||
	    sym->st_name == 0 || sym->st_name >= str->size)
		return 0;
	uint64_t size = sym->st_size ? sym->st_size : implied_size(elf, sym);
	/* The name's rank among aliases is settled once the table is sorted
	 * (finish()), from the names of the aliases alone. */
	return xpu_symtab_add_ref(t, sym->st_value, size, sym->st_name, sym_prio(sym));
}

/* The string table a symbol table section links to. */
static int find_strtab(Elf *elf, const GElf_Shdr *sh, struct strtab *str)
{
	GElf_Shdr strsh;
	Elf_Scn *strscn = elf_getscn(elf, sh->sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB ||
	    (strsh.sh_flags & SHF_COMPRESSED) || strsh.sh_size >= UINT32_MAX)
		return -1;
	str->off = strsh.sh_offset;
	str->size = strsh.sh_size;
	str->mem = NULL;
	return 0;
}

/* Adds the function symbols of one symbol table section to t; *str receives
 * where their names are. */
static int read_symbols(Elf *elf, Elf_Scn *scn, struct xpu_symtab *t, struct strtab *str,
			char *err, size_t errlen)
{
	GElf_Shdr sh;
	Elf_Data *d;
	if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || find_strtab(elf, &sh, str) < 0) {
		fail(err, errlen, "unreadable symbol table: %s", elf_errmsg(-1));
		return -1;
	}
	size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t n = entsize ? sh.sh_size / entsize : 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			break;
		if (add_sym(elf, &sym, str, t) < 0) {
			fail(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

static int same_build_id(Elf *elf, const struct xpu_elf *e)
{
	uint8_t id[BUILD_ID_MAX];
	size_t len;
	read_build_id(elf, id, &len);
	return len == e->build_id_len && memcmp(id, e->build_id, len) == 0;
}

static int file_crc_is(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	ssize_t r;
	off_t off = 0;
	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)r);
		off += r;
	}
	return r == 0 && (uint32_t)crc == want;
}

/* Reads the .symtab of a separate debug file into e if the file belongs to
 * it: same build-id, or (when e has none) the CRC its .gnu_debuglink names.
 * The debug file is then the one e reads names from. */
static int try_debug_file(const char *path, struct xpu_elf *e, const uint32_t *crc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	int ok = -1;
	struct strtab str;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	struct sections s;
	if (elf && elf_kind(elf) == ELF_K_ELF && (find_sections(elf, &s), s.symtab) &&
	    (e->build_id_len ? same_build_id(elf, e) : crc && file_crc_is(fd, *crc)))
		ok = read_symbols(elf, s.symtab, &e->syms, &str, NULL, 0);
	elf_end(elf);
	if (ok == 0 && e->syms.n) {
		e->fd = fd;
		e->str_off = str.off;
		e->str_size = str.size;
		return 0;
	}
	close(fd);
	return -1;
}

/* DEBUG_DIR/.build-id/ab/cdef...debug for build-id abcdef... */
static int debug_by_build_id(struct xpu_elf *e)
{
	char hex[2 * BUILD_ID_MAX + 1], path[PATH_MAX + sizeof(hex) + 32];
	if (!e->build_id_len)
		return -1;
	for (size_t i = 0; i < e->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", e->build_id[i]);
	int n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dir, hex, hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	return try_debug_file(path, e, NULL);
}

/* .gnu_debuglink: a file name, NUL, padding to 4, then a CRC32 of the debug
 * file.  The name must be a plain name: no directories, so it cannot point
 * outside the debug directory. */
static int debug_by_link(Elf_Scn *scn, const char *path, struct xpu_elf *e)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !path || path[0] != '/')
		return -1;
	const char *name = d->d_buf;
	size_t len = strnlen(name, d->d_size), crc_off = (len + 4) & ~(size_t)3;
	if (len == 0 || len >= 256 || memchr(name, '/', len) || crc_off + 4 > d->d_size)
		return -1;
	uint32_t crc;
	memcpy(&crc, (const char *)d->d_buf + crc_off, 4);
	const char *slash = strrchr(path, '/');
	char dpath[PATH_MAX * 2 + 300];
	int n = snprintf(dpath, sizeof(dpath), "%s%.*s/%s", debug_dir, (int)(slash - path), path,
			 name);
	if (n < 0 || (size_t)n >= sizeof(dpath))
		return -1;
	return try_debug_file(dpath, e, &crc);
}

/* A symbol table of the file itself: names are read from fd, or, for an
 * image in memory (fd < 0), from a copy of its string table. */
static int own_symbols(Elf *elf, Elf_Scn *scn, int fd, struct xpu_elf *e, char *err, size_t errlen)
{
	struct strtab str;
	if (read_symbols(elf, scn, &e->syms, &str, err, errlen) < 0)
		return -1;
	if (fd >= 0) {
		if ((e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			fail(err, errlen, "cannot keep the file open: %s", strerror(errno));
			return -1;
		}
	} else {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(elf_getscn(elf, sh.sh_link), NULL)) ||
		    !d->d_buf || d->d_size != str.size || !(e->str_copy = malloc(str.size))) {
			fail(err, errlen, "unreadable string table");
			return -1;
		}
		memcpy(e->str_copy, d->d_buf, str.size);
	}
	e->str_off = str.off;
	e->str_size = str.size;
	return 0;
}

/* Chooses the symbol source: .symtab, a debug file's .symtab, .dynsym. */
static int load_symbols(Elf *elf, int fd, const char *path, struct xpu_elf *e, char *err,
			size_t errlen)
{
	struct sections s;
	find_sections(elf, &s);
	if (s.symtab) {
		if (own_symbols(elf, s.symtab, fd, e, err, errlen) < 0)
			return -1;
		if (e->syms.n)
			return 0;
		drop_names(e);
	}
	if (fd >= 0 && debug_by_build_id(e) == 0)
		return 0;
	xpu_symtab_free(&e->syms);
	if (fd >= 0 && s.debuglink && debug_by_link(s.debuglink, path, e) == 0)
		return 0;
	xpu_symtab_free(&e->syms);
	if (s.dynsym)
		return own_symbols(elf, s.dynsym, fd, e, err, errlen);
	return 0;
}

static int load(Elf *elf, int fd, const char *path, struct xpu_elf *e, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	if (elf_kind(elf) != ELF_K_ELF) {
		fail(err, errlen, "not an ELF file");
		return -1;
	}
	if (!gelf_getehdr(elf, &eh)) {
		fail(err, errlen, "bad ELF header: %s", elf_errmsg(-1));
		return -1;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		fail(err, errlen, "not an executable or shared object (ELF type %u)", eh.e_type);
		return -1;
	}
	/* libelf quietly reports no sections when their headers lie past the
	 * end of the file; a truncated file must not pass for a stripped one. */
	size_t shnum;
	if (elf_getshdrnum(elf, &shnum) < 0 || (eh.e_shoff && !shnum) ||
	    (eh.e_shnum && shnum != eh.e_shnum)) {
		fail(err, errlen, "section headers cut off or corrupt (truncated file?)");
		return -1;
	}
	if (read_segments(elf, e) < 0) {
		fail(err, errlen, "bad program headers: %s", elf_errmsg(-1));
		return -1;
	}
	read_build_id(elf, e->build_id, &e->build_id_len);
	if (load_symbols(elf, fd, path, e, err, errlen) < 0)
		return -1;
	finish(e);
	return 0;
}

/* Loads from an Elf handle (NULL when elf_begin failed) and ends it. */
static struct xpu_elf *load_elf(Elf *elf, int fd, const char *path, char *err, size_t errlen)
{
	struct xpu_elf *e = calloc(1, sizeof(*e));
	if (e) {
		e->fd = -1;
		e->refs = 1;
	}
	if (!elf)
		fail(err, errlen, "cannot read ELF: %s", elf_errmsg(-1));
	else if (!e)
		fail(err, errlen, "out of memory");
	if (!elf || !e || load(elf, fd, path, e, err, errlen) < 0) {
		xpu_elf_free(e);
		e = NULL;
	}
	elf_end(elf);
	return e;
}

struct xpu_elf *xpu_elf_load_fd_path(int fd, const char *path, char *err, size_t errlen)
{
	elf_version(EV_CURRENT);
	return load_elf(elf_begin(fd, ELF_C_READ, NULL), fd, path, err, errlen);
}

struct xpu_elf *xpu_elf_load_mem(const void *image, size_t len, char *err, size_t errlen)
{
	/* libelf may write to the image it is given: hand it a copy. */
	char *copy = malloc(len ? len : 1);
	if (!copy) {
		fail(err, errlen, "out of memory");
		return NULL;
	}
	memcpy(copy, image, len);
	elf_version(EV_CURRENT);
	struct xpu_elf *e = load_elf(elf_memory(copy, len), -1, NULL, err, errlen);
	free(copy);
	return e;
}

struct xpu_elf *xpu_elf_load_fd(int fd, char *err, size_t errlen)
{
	return xpu_elf_load_fd_path(fd, NULL, err, errlen);
}

struct xpu_elf *xpu_elf_load(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	struct xpu_elf *e = xpu_elf_load_fd_path(fd, path, err, errlen);
	close(fd);
	return e;
}

struct xpu_elf *xpu_elf_ref(struct xpu_elf *e)
{
	if (e)
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
	return e;
}

void xpu_elf_free(struct xpu_elf *e)
{
	if (!e || __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	xpu_symtab_free(&e->syms);
	drop_names(e);
	free(e->segs);
	free(e);
}

int xpu_elf_offset_to_vaddr(const struct xpu_elf *e, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];
		if (off >= s->off && off - s->off < s->filesz) {
			*vaddr = s->vaddr + (off - s->off);
			return 0;
		}
	}
	return -1;
}

uint32_t xpu_elf_find(const struct xpu_elf *e, uint64_t vaddr, uint64_t *start)
{
	uint32_t i = xpu_symtab_find(&e->syms, vaddr);
	if (i != UINT32_MAX && start)
		*start = e->syms.v[i].start;
	return i;
}

const char *xpu_elf_lookup(const struct xpu_elf *e, uint64_t vaddr, uint64_t *start, char *buf,
			   size_t size)
{
	uint32_t i = xpu_elf_find(e, vaddr, start);
	return i != UINT32_MAX && xpu_elf_sym_name(e, i, buf, size) > 0 ? buf : NULL;
}

const uint8_t *xpu_elf_build_id(const struct xpu_elf *e, size_t *len)
{
	*len = e->build_id_len;
	return e->build_id_len ? e->build_id : NULL;
}

size_t xpu_elf_nsyms(const struct xpu_elf *e)
{
	return e->syms.n;
}

const struct xpu_symtab *xpu_elf_symtab(const struct xpu_elf *e)
{
	return &e->syms;
}

size_t xpu_elf_bytes(const struct xpu_elf *e)
{
	return e ? e->syms.cap * sizeof(*e->syms.v) + (e->str_copy ? e->str_size : 0) : 0;
}
