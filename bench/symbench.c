/* SPDX-License-Identifier: GPL-2.0-only */
/* Symbolizing the stacks of a large C++ library with xputop's symbolizer
 * (core/symbols/symbolize.h), for bench/symbolize.sh to compare with addr2line.
 *
 *   symbench LIB STACKS DEPTH ADDRS NAMES
 *
 * Maps LIB executable into this process, picks STACKS call paths of DEPTH
 * frames through its functions (a call tree: stacks share their callers, as
 * real ones do; each frame an address inside a function), and writes every
 * frame's file address (hex, one a line, as addr2line takes them) to ADDRS.
 * Then symbolizes the same frames through xpu_sym_user() as xputop does a
 * sample of this process: cold (a new symbolizer: maps, ELF symbols, names),
 * warm (the same stacks again: the address cache) and warm with new
 * addresses (other addresses in the same functions: the symbol table and the
 * names, as new stacks of a known process), and writes each frame's name to
 * NAMES.  Prints "frames F unique U cold_s C warm_s W warm_new_s N".
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "symbolize.h"

struct fn { uint64_t value, size; };

static const uint8_t *img;
static size_t img_len;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a + 0x9e3779b97f4a7c15ULL) ^ (b * 0xbf58476d1ce4e5b9ULL);
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

static const void *at(uint64_t off, uint64_t len)
{
	if (off > img_len || len > img_len - off) {
		fprintf(stderr, "symbench: not a well-formed ELF file\n");
		exit(1);
	}
	return img + off;
}

/* The functions of .symtab (or .dynsym without it) that have a size. */
static struct fn *functions(size_t *n)
{
	const Elf64_Ehdr *eh = at(0, sizeof(*eh));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64) {
		fprintf(stderr, "symbench: not a 64-bit ELF file\n");
		exit(1);
	}
	const Elf64_Shdr *sh = at(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(*sh)), *tab = NULL;
	for (int want = SHT_SYMTAB; !tab && want; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0)
		for (unsigned i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == (Elf64_Word)want)
				tab = &sh[i];
	if (!tab) {
		fprintf(stderr, "symbench: no symbol table\n");
		exit(1);
	}
	size_t nsym = tab->sh_size / sizeof(Elf64_Sym), k = 0;
	const Elf64_Sym *sym = at(tab->sh_offset, tab->sh_size);
	struct fn *v = malloc(nsym * sizeof(*v));
	for (size_t i = 0; i < nsym; i++)
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC && sym[i].st_size && sym[i].st_shndx != SHN_UNDEF)
			v[k++] = (struct fn){ sym[i].st_value, sym[i].st_size };
	*n = k;
	return v;
}

/* File offset of a virtual address, through the PT_LOAD segments. */
static uint64_t file_offset(uint64_t vaddr)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Phdr *ph = at(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(*ph));
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr && vaddr < ph[i].p_vaddr + ph[i].p_filesz)
			return vaddr - ph[i].p_vaddr + ph[i].p_offset;
	return UINT64_MAX;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: symbench LIB STACKS DEPTH ADDRS NAMES\n");
		return 2;
	}
	uint32_t nstacks = (uint32_t)atol(argv[2]), depth = (uint32_t)atol(argv[3]);
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !nstacks || !depth || depth > 127) {
		perror(argv[1]);
		return 1;
	}
	img_len = (size_t)st.st_size;
	img = mmap(NULL, img_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (img == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	size_t nfn;
	struct fn *fns = functions(&nfn);
	if (nfn < 1000) {
		fprintf(stderr, "symbench: %s has only %zu sized functions\n", argv[1], nfn);
		return 1;
	}

	/* Frame d of stack i: the function is chosen by the path above it (a
	 * call tree four callees wide), the address somewhere inside it. */
	size_t nframes = (size_t)nstacks * depth;
	uint64_t *vaddr = malloc(nframes * sizeof(*vaddr)), *ips = malloc(nframes * sizeof(*ips));
	uint64_t *ips2 = malloc(nframes * sizeof(*ips2));
	uint32_t *out = malloc(nframes * sizeof(*out));
	FILE *fa = fopen(argv[4], "w");
	if (!fa) {
		perror(argv[4]);
		return 1;
	}
	for (uint32_t i = 0; i < nstacks; i++) {
		uint64_t path = 1;
		for (uint32_t d = 0; d < depth; d++) {
			path = mix(path, d < 3 ? 0 : mix(i, d) % 4 + 1);
			const struct fn *f = &fns[path % nfn];
			uint64_t v = f->value + mix(path, 7) % f->size;
			uint64_t off = file_offset(v), off2 = file_offset(f->value + mix(path, 11) % f->size);
			if (off == UINT64_MAX || off2 == UINT64_MAX) {
				fprintf(stderr, "symbench: %#llx is in no segment\n", (unsigned long long)v);
				return 1;
			}
			size_t k = (size_t)i * depth + d;
			vaddr[k] = v;
			/* Leaf first, as the kernel captures them; return addresses
			 * (all but the leaf) are looked up at address - 1. */
			size_t leaf_first = (size_t)i * depth + (depth - 1 - d);
			ips[leaf_first] = (uint64_t)(uintptr_t)img + off + (d == depth - 1 ? 0 : 1);
			ips2[leaf_first] = (uint64_t)(uintptr_t)img + off2 + (d == depth - 1 ? 0 : 1);
			fprintf(fa, "%llx\n", (unsigned long long)v);
		}
	}
	fclose(fa);
	qsort(vaddr, nframes, sizeof(*vaddr), cmp_u64);
	size_t unique = nframes ? 1 : 0;
	for (size_t k = 1; k < nframes; k++)
		unique += vaddr[k] != vaddr[k - 1];

	struct xpu_dict dict;
	xpu_dict_init(&dict);
	double t0 = now_s();
	struct xpu_symbolizer *s = xpu_sym_new(&dict, NULL);
	if (!s)
		return 1;
	for (uint32_t i = 0; i < nstacks; i++)
		xpu_sym_user(s, (uint32_t)getpid(), ips + (size_t)i * depth, depth, out + (size_t)i * depth);
	double t1 = now_s();
	for (uint32_t i = 0; i < nstacks; i++)
		xpu_sym_user(s, (uint32_t)getpid(), ips + (size_t)i * depth, depth, out + (size_t)i * depth);
	double t2 = now_s();
	uint32_t *out2 = malloc(nframes * sizeof(*out2));
	for (uint32_t i = 0; i < nstacks; i++)
		xpu_sym_user(s, (uint32_t)getpid(), ips2 + (size_t)i * depth, depth, out2 + (size_t)i * depth);
	double t3 = now_s();

	FILE *fn = fopen(argv[5], "w");
	if (!fn) {
		perror(argv[5]);
		return 1;
	}
	char name[65536];
	for (uint32_t i = 0; i < nstacks; i++)
		for (uint32_t d = 0; d < depth; d++) {	/* root first, as written to ADDRS */
			xpu_frame_text(&dict, out[(size_t)i * depth + (depth - 1 - d)], name, sizeof(name));
			fprintf(fn, "%s\n", name);
		}
	fclose(fn);
	printf("frames %zu unique %zu cold_s %.6f warm_s %.6f warm_new_s %.6f\n", nframes, unique, t1 - t0, t2 - t1,
	       t3 - t2);
	xpu_sym_free(s);
	xpu_dict_free(&dict);
	return 0;
}
