/*
 * Intel MKL (linked into torch's CPU library) chooses its kernels in two steps: a vendor check,
 * `mkl_serv_intel_cpu_true`, then the instruction sets the CPU reports. On a CPU whose vendor is
 * not Intel, the first step already sends it to its generic kernels, whatever the CPU supports:
 * an AMD EPYC with AVX2 and FMA runs SGEMM without them.
 *
 * This file defines the same symbol and answers 1. Loaded into the global symbol scope before
 * torch (`lal_allennlp/_compat/import_hook.py`, at interpreter start-up, on AMD CPUs, and only in
 * a process started with LAL_MKL_VENDOR_OVERRIDE=1), it is the definition that MKL's own call
 * binds to, so MKL goes on to its second step and picks the kernels of the instruction sets the
 * CPU actually has. Nothing else changes: the kernels are MKL's own, chosen by the CPU's
 * reported features as on an Intel CPU.
 */
int mkl_serv_intel_cpu_true(void) { return 1; }
