/* ELF symbol tables: function symbols from .symtab (or a separate debug file
 * found by build-id or .gnu_debuglink) or else .dynsym, the PT_LOAD segments
 * that turn a file offset into a symbol address, and the build-id.
 *
 * Files come from other users and may be truncated or corrupt: libelf checks
 * every section against the file size, and every string and symbol index is
 * checked here before use.  ELF_C_READ (not _MMAP) so a file truncated while
 * we read it gives an error instead of SIGBUS.
 */
#include "symbolize.h"

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
	struct xpu_symtab syms;
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

static int add_sym(Elf *elf, const GElf_Sym *sym, const Elf_Data *str, struct xpu_symtab *t)
{
	int type = GELF_ST_TYPE(sym->st_info);
	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym->st_shndx == SHN_UNDEF ||
	    sym->st_name >= str->d_size)
		return 0;
	const char *name = (const char *)str->d_buf + sym->st_name;
	size_t room = str->d_size - sym->st_name, len = strnlen(name, room);
	if (len == 0 || len == room)
		return 0;
	/* "__libc_start_main@@GLIBC_2.34": the version is not part of the name. */
	const char *at = memchr(name, '@', len);
	if (at && at > name)
		len = (size_t)(at - name);
	uint64_t size = sym->st_size ? sym->st_size : implied_size(elf, sym);
	return xpu_symtab_add(t, sym->st_value, size, name, len, 0,
			      xpu_symtab_name_rank(name, len, sym_prio(sym)));
}

/* Adds the function symbols of one symbol table section to t. */
static int read_symbols(Elf *elf, Elf_Scn *scn, struct xpu_symtab *t, char *err, size_t errlen)
{
	GElf_Shdr sh, strsh;
	Elf_Scn *strscn;
	Elf_Data *d, *str;
	if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) ||
	    !(strscn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(strscn, &strsh) ||
	    strsh.sh_type != SHT_STRTAB || !(str = elf_getdata(strscn, NULL)) || !str->d_buf) {
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

/* Reads the .symtab of a separate debug file into t if the file belongs to e:
 * same build-id, or (when e has none) the CRC its .gnu_debuglink names. */
static int try_debug_file(const char *path, const struct xpu_elf *e, const uint32_t *crc,
			  struct xpu_symtab *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	int ok = -1;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	struct sections s;
	if (elf && elf_kind(elf) == ELF_K_ELF && (find_sections(elf, &s), s.symtab) &&
	    (e->build_id_len ? same_build_id(elf, e) : crc && file_crc_is(fd, *crc)))
		ok = read_symbols(elf, s.symtab, t, NULL, 0);
	elf_end(elf);
	close(fd);
	return ok;
}

/* DEBUG_DIR/.build-id/ab/cdef...debug for build-id abcdef... */
static int debug_by_build_id(const struct xpu_elf *e, struct xpu_symtab *t)
{
	char hex[2 * BUILD_ID_MAX + 1], path[PATH_MAX + sizeof(hex) + 32];
	if (!e->build_id_len)
		return -1;
	for (size_t i = 0; i < e->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", e->build_id[i]);
	int n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dir, hex, hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	return try_debug_file(path, e, NULL, t);
}

/* .gnu_debuglink: a file name, NUL, padding to 4, then a CRC32 of the debug
 * file.  The name must be a plain name: no directories, so it cannot point
 * outside the debug directory. */
static int debug_by_link(Elf_Scn *scn, const char *path, const struct xpu_elf *e,
			 struct xpu_symtab *t)
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
	return try_debug_file(dpath, e, &crc, t);
}

/* Chooses the symbol source: .symtab, a debug file's .symtab, .dynsym. */
static int load_symbols(Elf *elf, const char *path, struct xpu_elf *e, char *err, size_t errlen)
{
	struct sections s;
	find_sections(elf, &s);
	if (s.symtab) {
		if (read_symbols(elf, s.symtab, &e->syms, err, errlen) < 0)
			return -1;
		if (e->syms.n)
			return 0;
	}
	if (debug_by_build_id(e, &e->syms) == 0 && e->syms.n)
		return 0;
	xpu_symtab_free(&e->syms);
	if (s.debuglink && debug_by_link(s.debuglink, path, e, &e->syms) == 0 && e->syms.n)
		return 0;
	xpu_symtab_free(&e->syms);
	if (s.dynsym)
		return read_symbols(elf, s.dynsym, &e->syms, err, errlen);
	return 0;
}

static int load(Elf *elf, const char *path, struct xpu_elf *e, char *err, size_t errlen)
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
	if (load_symbols(elf, path, e, err, errlen) < 0)
		return -1;
	xpu_symtab_finish(&e->syms);
	return 0;
}

/* Loads from an Elf handle (NULL when elf_begin failed) and ends it. */
static struct xpu_elf *load_elf(Elf *elf, const char *path, char *err, size_t errlen)
{
	struct xpu_elf *e = calloc(1, sizeof(*e));
	if (!elf)
		fail(err, errlen, "cannot read ELF: %s", elf_errmsg(-1));
	else if (!e)
		fail(err, errlen, "out of memory");
	if (!elf || !e || load(elf, path, e, err, errlen) < 0) {
		xpu_elf_free(e);
		e = NULL;
	}
	elf_end(elf);
	return e;
}

struct xpu_elf *xpu_elf_load_fd_path(int fd, const char *path, char *err, size_t errlen)
{
	elf_version(EV_CURRENT);
	return load_elf(elf_begin(fd, ELF_C_READ, NULL), path, err, errlen);
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
	struct xpu_elf *e = load_elf(elf_memory(copy, len), NULL, err, errlen);
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

void xpu_elf_free(struct xpu_elf *e)
{
	if (!e)
		return;
	xpu_symtab_free(&e->syms);
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

const char *xpu_elf_lookup(const struct xpu_elf *e, uint64_t vaddr, uint64_t *start)
{
	uint32_t i = xpu_symtab_find(&e->syms, vaddr);
	if (i == UINT32_MAX)
		return NULL;
	if (start)
		*start = e->syms.v[i].start;
	return xpu_symtab_name(&e->syms, i);
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
