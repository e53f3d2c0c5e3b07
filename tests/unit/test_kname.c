/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel names shortened by keeping what distinguishes them (core/symbols/kname.c),
 * on the 73 distinct kernel names PyTorch 2.11 launched on an H100
 * (tests/fixtures/pytorch_kernels.txt: HF transformers decoding,
 * torch.compile CUDA graphs, matmul loops; demangled). */
#include "check.h"

#include "kname.h"

#include <ctype.h>

#define FIXTURE "tests/fixtures/pytorch_kernels.txt"
#define MAX_NAMES 128

static char *names[MAX_NAMES];
static int nnames;

static void load(void)
{
	static char line[65536];
	FILE *f = nnames ? NULL : fopen(FIXTURE, "r");
	while (f && nnames < MAX_NAMES && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		names[nnames++] = strdup(line);
	}
	if (f)
		fclose(f);
}

static const char *shortened(const char *name)
{
	static char buf[2048];
	xpu_kname_short(name, buf, sizeof(buf));
	return buf;
}

/* The fixture's one name that holds needle. */
static const char *fixture(const char *needle)
{
	const char *found = NULL;
	for (int i = 0; i < nnames; i++) {
		if (strstr(names[i], needle)) {
			if (found)
				fprintf(stderr, "  \"%s\" is in more than one fixture name\n", needle);
			found = names[i];
		}
	}
	if (!found)
		fprintf(stderr, "  \"%s\" is in no fixture name\n", needle);
	return found ? found : "";
}

TEST(every_pytorch_kernel_shortens_to_a_name_of_its_own)
{
	load();
	REQUIRE(nnames == 73);
	char *out[MAX_NAMES];
	for (int i = 0; i < nnames; i++) {
		out[i] = strdup(shortened(names[i]));
		CHECK(out[i][0] != '\0');
		CHECK(strlen(out[i]) < strlen(names[i]) || !strpbrk(names[i], "(<"));
	}
	for (int i = 0; i < nnames; i++)
		for (int j = i + 1; j < nnames; j++)
			if (strcmp(out[i], out[j]) == 0) {
				fprintf(stderr, "  \"%s\" twice:\n    %.200s\n    %.200s\n", out[i], names[i], names[j]);
				check_failed++;
			}
	for (int i = 0; i < nnames; i++)
		free(out[i]);
}

/* "void at::native::(anonymous namespace)::Kern<...>(...)" -> "Kern" */
static void own_name(const char *full, char *buf, size_t size)
{
	static const char anon[] = "(anonymous namespace)";
	const char *p = strncmp(full, "void ", 5) == 0 ? full + 5 : full;
	size_t n = 0;
	while (p[n] && p[n] != '<' && (p[n] != '(' || strncmp(p + n, anon, strlen(anon)) == 0))
		n += p[n] == '(' ? strlen(anon) : 1;
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	const char *start = p;
	for (const char *q = p; q + 1 < p + n; q++)
		if (q[0] == ':' && q[1] == ':')
			start = q + 2;
	n -= (size_t)(start - p);
	snprintf(buf, size, "%.*s", (int)n, start);
}

TEST(the_short_name_starts_with_the_kernels_own_name)
{
	load();
	for (int i = 0; i < nnames; i++) {
		char own[256];
		own_name(names[i], own, sizeof(own));
		const char *s = shortened(names[i]);
		size_t n = strlen(own);
		if (strncmp(s, own, n) != 0 || (s[n] != '<' && s[n] != '\0')) {
			fprintf(stderr, "  \"%s\" does not start with \"%s\"\n", s, own);
			check_failed++;
		}
	}
}

/* Whether an identifier names what the kernel computes: a functor, an op
 * set, a kernel function or a CUDA kernel wrapper of an operator. */
static int is_operation(const char *id)
{
	size_t n = strlen(id);
	return strstr(id, "Functor") || strstr(id, "functor") || strstr(id, "_kernel") ||
	       (n > 3 && strcmp(id + n - 3, "Ops") == 0);
}

TEST(the_short_name_keeps_every_functor_and_operator)
{
	load();
	for (int i = 0; i < nnames; i++) {
		const char *s = shortened(names[i]);
		for (const char *p = names[i]; *p;) {
			if (!isalpha((unsigned char)*p) && *p != '_') {
				p++;
				continue;
			}
			char id[256];
			size_t n = 0;
			while ((isalnum((unsigned char)*p) || *p == '_') && n + 1 < sizeof(id))
				id[n++] = *p++;
			id[n] = '\0';
			if (is_operation(id) && !strstr(s, id)) {
				fprintf(stderr, "  \"%s\" lost %s\n", s, id);
				check_failed++;
			}
		}
	}
}

/* A fixture name (by a part only it holds) and its short form. */
static const struct {
	const char *name, *want;
} expected[] = {
	{ "FillFunctor<int>, std::array<char*, 1ul> >(",
	  "vectorized_elementwise_kernel<4, FillFunctor<int>>" },
	{ "rsqrt_kernel_cuda",
	  "vectorized_elementwise_kernel<4, rsqrt_kernel_cuda::{lambda(float)#1}>" },
	{ "{lambda()#11}::operator()() const::{lambda(bool)#1}, std::array",
	  "unrolled_elementwise_kernel<direct_copy_kernel_cuda::{lambda(bool)#1}, 4>" },
	{ "{lambda()#4}::operator()() const::{lambda(long)#1}, std::array<char*, 2ul>, 4",
	  "unrolled_elementwise_kernel<direct_copy_kernel_cuda::{lambda(long)#1}, 4>" },
	{ "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}",
	  "unrolled_elementwise_kernel<direct_copy_kernel_cuda::{lambda(float)#1}, 4>" },
	{ "vectorized_elementwise_kernel<8, at::native::BinaryFunctor",
	  "vectorized_elementwise_kernel<8, BinaryFunctor<BFloat16, BFloat16, BFloat16, MulFunctor<float>>>" },
	{ "AUnaryFunctor<long, long, bool, at::native::(anonymous namespace)::CompareEqFunctor",
	  "vectorized_elementwise_kernel<4, AUnaryFunctor<long, long, bool, CompareEqFunctor<long>>>" },
	{ "arange_cuda_out",
	  "elementwise_kernel_with_index<int, arange_cuda_out::{lambda(long)#1}>" },
	{ "silu_kernel",
	  "vectorized_elementwise_kernel<8, silu_kernel::{lambda(BFloat16)#1}>" },
	{ "ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor",
	  "reduce_kernel<512, 1, ReduceOp<float, func_wrapper_t<float, sum_functor<float, float, float>"
	  "::operator()::{lambda(float, float)#1}>, unsigned int, float, 4, 4>>" },
	{ "BitwiseAndFunctor",
	  "unrolled_elementwise_kernel<BinaryFunctor<long, long, long, BitwiseAndFunctor<long>>, 4>" },
	{ "cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(",
	  "Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>" },
	{ "DeviceScanInitKernel",
	  "DeviceScanInitKernel<ScanTileState<long, true>>" },
	{ "indexSelectSmallIndex",
	  "indexSelectSmallIndex<BFloat16, long, unsigned int, 2, 2, -2>" },
};

TEST(short_names_read_as_expected)
{
	load();
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		CHECK_STR(shortened(fixture(expected[i].name)), expected[i].want);
}

TEST(names_that_are_not_cxx_stay_as_they_are)
{
	load();
	int n = 0;
	for (int i = 0; i < nnames; i++) {
		if (strpbrk(names[i], "<(: "))
			continue;
		CHECK_STR(shortened(names[i]), names[i]);
		n++;
	}
	CHECK_INT(n, ==, 16);	/* triton_*, nvjet_*, cudnn_*, sm80_xmma_* */
	CHECK_STR(shortened("my-kernel.v2"), "my-kernel.v2");
}

TEST(plumbing_arguments_are_left_out_and_only_they)
{
	load();
	for (int i = 0; i < nnames; i++) {
		const char *s = shortened(names[i]);
		CHECK(!strstr(s, "array<") && !strstr(s, "OffsetCalculator") && !strstr(s, "LoadWith") &&
		      !strstr(s, "StoreWith"));
	}
	CHECK_STR(shortened("void k<std::array<float, 4ul>, std::array<char*, 2ul> >(int)"), "k<array<float, 4ul>>");
	CHECK_STR(shortened("void k<std::array<char*, 2ul> >(int)"), "k");
	CHECK_STR(shortened("void k<Foo<TrivialOffsetCalculator<1, unsigned int> > >()"), "k<Foo>");
	CHECK_STR(shortened("void k<at::native::memory::LoadWithCast<2>, my::LoadWithCast>()"), "k<LoadWithCast>");
}

TEST(namespaces_go_at_every_level_classes_with_arguments_stay)
{
	CHECK_STR(shortened("void a::b::k<a::(anonymous namespace)::F<std::c::G<int> >, a::H<int>::I>(int)"),
		  "k<F<G<int>>, H<int>::I>");
	CHECK_STR(shortened("int* ns::Obj::operator()(int) const"), "Obj::operator()");
	CHECK_STR(shortened("ns::plain_function(char const*, unsigned long)"), "plain_function");
	CHECK_STR(shortened("std::vector<int, std::allocator<int> >::push_back(int const&)"),
		  "vector<int, allocator<int>>::push_back");
	CHECK_STR(shortened("foo::bar(int) [clone .cold]"), "bar");
}

TEST(the_qualified_form_keeps_everything_but_return_type_and_parameters)
{
	char buf[512];
	load();
	xpu_kname_qualified(fixture("FillFunctor<int>, std::array<char*, 1ul> >("), buf, sizeof(buf));
	CHECK_STR(buf, "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char*, 1ul> >");
	xpu_kname_qualified("void (anonymous namespace)::k<int>(float*)", buf, sizeof(buf));
	CHECK_STR(buf, "(anonymous namespace)::k<int>");
	xpu_kname_qualified("ns::Obj::operator()(int) const", buf, sizeof(buf));
	CHECK_STR(buf, "ns::Obj::operator()");
	xpu_kname_qualified("triton_poi_fused_add_addmm_4", buf, sizeof(buf));
	CHECK_STR(buf, "triton_poi_fused_add_addmm_4");
}

/* Names from other processes can be cut short or be anything at all. */
TEST(cut_and_malformed_names_give_terminated_text_that_fits)
{
	char buf[64], cut[8192];
	load();
	for (int i = 0; i < nnames; i++) {
		size_t len = strlen(names[i]);
		for (size_t k = 0; k <= len && k < sizeof(cut); k += 7) {
			memcpy(cut, names[i], k);
			cut[k] = '\0';
			size_t n = xpu_kname_short(cut, buf, sizeof(buf));
			CHECK(n < sizeof(buf) && strlen(buf) == n);
			n = xpu_kname_qualified(cut, buf, sizeof(buf));
			CHECK(n < sizeof(buf) && strlen(buf) == n);
		}
	}
	static const char *const odd[] = { "", "<", ">>>", "(((", "::", "a::", "{lambda(", "void (", "operator",
					   "k<(anonymous namespace)", "~", "-", "a<b(c{d[e" };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		size_t n = xpu_kname_short(odd[i], buf, sizeof(buf));
		CHECK(n < sizeof(buf) && strlen(buf) == n);
	}
	memset(cut, '<', sizeof(cut) - 1);	/* deeper than the renderer goes */
	cut[sizeof(cut) - 1] = '\0';
	cut[0] = 'k';
	CHECK(xpu_kname_short(cut, buf, sizeof(buf)) < sizeof(buf));
	CHECK_INT(xpu_kname_short("vectorized_elementwise_kernel", buf, 8), ==, 7);
	CHECK_STR(buf, "vectori");
	CHECK_INT(xpu_kname_short("x", buf, 0), ==, 0);
}
