/*
 * saxpy.cu - the kernel of mlsetup's driver-level smoke test (smoke.c):
 * y[i] = a * x[i] + y[i] over n floats, grid-stride, so any grid size
 * covers any n. It is compiled by make_kernel_image.sh into the fatbin and
 * the portable PTX beside it (saxpy.fatbin, saxpy_portable.ptx), which the
 * build embeds; building mlsetup itself needs no CUDA toolkit. extern "C"
 * keeps the symbol name "saxpy" for cuModuleGetFunction; the parameter
 * order (n, a, x, y) is what smoke.c passes to cuLaunchKernel and what the
 * fake libcuda in tests/shims runs.
 */
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
		y[i] = a * x[i] + y[i];
}
