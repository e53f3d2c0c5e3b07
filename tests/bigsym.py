#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the assembly of a shared library the size of libtorch_cpu.so's
symbol table, for tests/bpf/bigsym.sh: N functions (400,000 by default) with
long C++ names (about 210 characters mangled: 84 MB of names, libtorch_cpu.so
has 80 MB for 459k functions).  Each function spins a little and returns;
they are 16 bytes apart from bigsym_first, so a caller can reach function i
at bigsym_first + 16 * i.

  python3 tests/bigsym.py [N] | as -o big.o - && ld -shared -o libbigsym.so big.o
"""
import sys


def name(i):
    parts = ["xputop", "generated_code_namespace", "AnotherNestedScopeForLength",
             f"module_{i % 997:03d}", f"ClassWithAFairlyLongName{i % 4093:04d}",
             f"method_with_a_long_and_descriptive_name_{i:06d}"]
    return "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + "ERKSt6vectorIiSaIiEEPKcm"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400000
    out = sys.stdout
    out.write("\t.text\n\t.globl bigsym_first\n\t.p2align 4\nbigsym_first:\n")
    for i in range(n):
        fn = name(i)
        # 10 bytes of code, padded to 16: the function's index is its offset / 16.
        out.write(f"\t.p2align 4\n\t.type {fn},@function\n{fn}:\n"
                  f"\tmov $64,%eax\n1:\tdec %eax\n\tjnz 1b\n\tret\n\t.size {fn},10\n")
    out.write(f"\t.globl bigsym_count\n\t.section .rodata\n\t.p2align 2\nbigsym_count:\n\t.long {n}\n")


if __name__ == "__main__":
    main()
