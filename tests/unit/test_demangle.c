/* SPDX-License-Identifier: GPL-2.0-only */
/* Demangling (core/symbols/demangle.c): C++ names as the C++ runtime reads them,
 * Rust names in both manglings, and names that stay as they are.
 *
 * The Rust symbols are rustc's own output, taken with nm: tests/progs/rust_spin.rs
 * built as tests/bpf/rust.sh builds it by rustc 1.95, with the default (legacy)
 * mangling and with -C symbol-mangling-version=v0; the v0 symbol with LLVM's
 * ".llvm." suffix is from the same program built by Debian's rustc 1.63, the
 * const-generic one from rustc 1.95's own librustc_driver (built with v0). */
#include "check.h"

#include "symbolize.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
extern void cxx_std_terminate(void) __asm__("_ZSt9terminatev");

static const char *demangled(const char *name)
{
	static char buf[1024];
	xpu_demangle(name, buf, sizeof(buf));
	return buf;
}

TEST(demangle_cxx_names)
{
	char buf[256];
	CHECK_INT(xpu_demangle("_ZN3foo3barEi", buf, sizeof(buf)), ==, strlen("foo::bar(int)"));
	CHECK_STR(buf, "foo::bar(int)");
	CHECK_STR(demangled("_ZNSt6vectorIiSaIiEE9push_backERKi"),
		  "std::vector<int, std::allocator<int> >::push_back(int const&)");
	CHECK_STR(demangled("_ZN3foo3barEi.cold"), "foo::bar(int) [clone .cold]");
	/* a PyTorch kernel, as CUPTI names it */
	CHECK_STR(demangled("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_"),
		  "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
		  "std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)");
}

/* Calls f with each defined symbol name in the .dynsym of the ELF file at path. */
static int each_dynsym(const char *path, void (*f)(const char *name, void *arg), void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	elf_version(EV_CURRENT);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *data = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM ? elf_getdata(scn, NULL) : NULL;
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			if (gelf_getsym(data, (int)i, &sym) && sym.st_shndx != SHN_UNDEF && sym.st_name) {
				f(elf_strptr(e, sh.sh_link, sym.st_name), arg);
				n++;
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return n;
}

struct cxx_count {
	int mangled, same;
};

static void compare_with_runtime(const char *name, void *arg)
{
	struct cxx_count *c = arg;
	if (strncmp(name, "_Z", 2) != 0)
		return;
	int status = -1;
	char *want = __cxa_demangle(name, NULL, NULL, &status);
	const char *got = demangled(name);
	c->mangled++;
	if (strcmp(got, status == 0 && want ? want : name) == 0)
		c->same++;
	else if (c->mangled - c->same <= 5)
		fprintf(stderr, "  %s: \"%s\", the C++ runtime says \"%s\"\n", name, got, want ? want : name);
	free(want);
}

TEST(demangle_cxx_names_as_the_cxx_runtime_does)
{
	Dl_info info;
	struct cxx_count c = { 0 };
	REQUIRE(dladdr((void *)cxx_std_terminate, &info) && info.dli_fname);
	CHECK_INT(each_dynsym(info.dli_fname, compare_with_runtime, &c), >, 1000);
	CHECK_INT(c.mangled, >, 1000);	/* libstdc++ exports thousands */
	CHECK_INT(c.same, ==, c.mangled);
}

TEST(demangle_rust_legacy_names_without_their_hash)
{
	CHECK_STR(demangled("_ZN9rust_spin4main17ha56df2d83bc24c7fE"), "rust_spin::main");
	CHECK_STR(demangled("_ZN9rust_spin4work9spin_leaf17h684ab4fb83000482E"), "rust_spin::work::spin_leaf");
	CHECK_STR(demangled("_ZN64_$LT$rust_spin..work..Mixer$u20$as$u20$rust_spin..work..Step$GT$4step17h88c261945241fa65E"),
		  "<rust_spin::work::Mixer as rust_spin::work::Step>::step");
	CHECK_STR(demangled("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h5f688859199f2c73E"),
		  "std::rt::lang_start::{{closure}}");
	/* with the suffix LLVM gives a function it specialized (written here) */
	CHECK_STR(demangled("_ZN9rust_spin4main17ha56df2d83bc24c7fE.llvm.1234567"), "rust_spin::main");
}

TEST(demangle_rust_v0_names)
{
	CHECK_STR(demangled("_RNvCsgv1QoIoodqq_9rust_spin10spin_outer"), "rust_spin::spin_outer");
	CHECK_STR(demangled("_RINvNtCsgv1QoIoodqq_9rust_spin4work9spin_leafNtB2_5MixerEB4_"),
		  "rust_spin::work::spin_leaf::<rust_spin::work::Mixer>");
	CHECK_STR(demangled("_RNvXNtCsgv1QoIoodqq_9rust_spin4workNtB2_5MixerNtB2_4Step4step"),
		  "<rust_spin::work::Mixer as rust_spin::work::Step>::step");
	CHECK_STR(demangled("_RNCINvNtCsdyIG5SqMl5y_3std2rt10lang_startuE0CsdToimNhzXW7_9rust_spin.llvm.9508773108879134660"),
		  "std::rt::lang_start::<()>::{closure#0}");
	CHECK_STR(demangled("_RNCNCNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal00s_0B9_"),
		  "std::rt::lang_start_internal::{closure#0}::{closure#0}::{closure#1}");
	CHECK_STR(demangled("_RINvMNtCs2fqUAidLEe7_15rustc_serialize6opaqueNtB3_11FileEncoder19panic_invalid_writeKj13_ECsdadwybgsbvk_12rustc_middle"),
		  "<rustc_serialize::opaque::FileEncoder>::panic_invalid_write::<19>");
}

TEST(demangle_leaves_other_names_alone)
{
	char buf[256];
	CHECK_STR(demangled("main"), "main");
	CHECK_STR(demangled("_Zgarbage!"), "_Zgarbage!");
	CHECK_STR(demangled("_RNvC!"), "_RNvC!");
	/* the demangler writes an empty identifier before it gives up (fuzz_kname) */
	CHECK_STR(demangled("_RINvNtCsgv1QoIoodqq_0rust_sixerEB4_"), "_RINvNtCsgv1QoIoodqq_0rust_sixerEB4_");
	CHECK_STR(demangled("triton_poi_fused_add_addmm_4"), "triton_poi_fused_add_addmm_4");
	/* Too long to demangle on the stack safely: kept as it is. */
	size_t big = 100000;
	char *huge = malloc(big + 1);
	REQUIRE(huge);
	for (int rust = 0; rust < 2; rust++) {
		memset(huge, 'A', big);
		memcpy(huge, rust ? "_RNvC3foo" : "_ZN3foo", rust ? 9 : 7);
		huge[big] = '\0';
		CHECK_INT(xpu_demangle(huge, buf, sizeof(buf)), ==, sizeof(buf) - 1);
		CHECK(strncmp(buf, huge, sizeof(buf) - 1) == 0);
	}
	free(huge);
}

TEST(demangle_truncates_to_buffer)
{
	char buf[8];
	CHECK_INT(xpu_demangle("_ZN3foo3barEi", buf, sizeof(buf)), ==, 7);
	CHECK_STR(buf, "foo::ba");
	CHECK_INT(xpu_demangle("_RNvCsgv1QoIoodqq_9rust_spin10spin_outer", buf, sizeof(buf)), ==, 7);
	CHECK_STR(buf, "rust_sp");
	CHECK_INT(xpu_demangle("main", buf, 0), ==, 0);
}
