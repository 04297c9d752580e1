/*
 * pci_ids.c - the built-in table of NVIDIA PCI device ids (vendor 0x10de):
 * marketing name and compute capability for each GPU that the pci probe may
 * find under /sys/bus/pci/devices when neither NVML nor the CUDA driver can
 * be loaded. The table is sorted by device id and searched by bisection.
 *
 * Sources (each id below appears in at least one of them):
 *   - NVIDIA open-gpu-kernel-modules README, section "Compatible GPUs"
 *     ("Product Name | PCI ID"), driver release 610.43.03: every Turing and
 *     newer id and product name in this table.
 *   - The PCI ID Repository (pci.ids, as in the pciutils/pciids repository
 *     and in Debian's 2023-04-11 snapshot): the Pascal P100 and Volta V100
 *     ids, 0x20b1 (A100 PCIe 40GB), 0x2336 (H100), 0x29bc (B100), 0x2b00
 *     (Jetson AGX Thor), 0x2bb2 and 0x2bbc (RTX PRO 6000D), and the chip
 *     (GP100, GV100, TU10x, GA100, GA10x, AD10x, GH100, GB100/GB102,
 *     GB110, GB20x, GB10B, GB20B) behind every other id, which fixes its
 *     compute capability.
 *   - Compute capabilities per chip family: NVIDIA CUDA GPU compute
 *     capability list, as summarised in docs/nvidia-and-python-facts.md.
 *
 * Names follow what nvidia-smi / NVML print for the part where known. Where
 * one device id covers several products that differ only by PCI subsystem
 * id (0x1e30 Quadro RTX 6000/8000, 0x25b6 A2/A16, 0x2342 GH200 120GB/480GB)
 * the name covers both. Jetson GPUs before Thor (Xavier, Orin) are not
 * PCI devices and have no entry.
 */
#include "internal.h"

static const ml_pci_gpu pci_gpus[] = {
        /* Pascal GP100 (6.0) */
        {0x15f7, "Tesla P100-PCIE-12GB", 6, 0},
        {0x15f8, "Tesla P100-PCIE-16GB", 6, 0},
        {0x15f9, "Tesla P100-SXM2-16GB", 6, 0},

        /* Volta GV100 (7.0) */
        {0x1db1, "Tesla V100-SXM2-16GB", 7, 0},
        {0x1db4, "Tesla V100-PCIE-16GB", 7, 0},
        {0x1db5, "Tesla V100-SXM2-32GB", 7, 0},
        {0x1db6, "Tesla V100-PCIE-32GB", 7, 0},
        {0x1db8, "Tesla V100-SXM3-32GB", 7, 0},
        {0x1dba, "Quadro GV100", 7, 0},
        {0x1df6, "Tesla V100S-PCIE-32GB", 7, 0},

        /* Turing TU10x (7.5) */
        {0x1e02, "NVIDIA TITAN RTX", 7, 5},
        {0x1e04, "NVIDIA GeForce RTX 2080 Ti", 7, 5},
        {0x1e07, "NVIDIA GeForce RTX 2080 Ti", 7, 5},
        {0x1e30, "Quadro RTX 6000/8000", 7, 5},
        {0x1e36, "Quadro RTX 6000", 7, 5},
        {0x1e81, "NVIDIA GeForce RTX 2080 SUPER", 7, 5},
        {0x1e82, "NVIDIA GeForce RTX 2080", 7, 5},
        {0x1e84, "NVIDIA GeForce RTX 2070 SUPER", 7, 5},
        {0x1e87, "NVIDIA GeForce RTX 2080", 7, 5},
        {0x1e89, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1e90, "NVIDIA GeForce RTX 2080", 7, 5},
        {0x1e91, "NVIDIA GeForce RTX 2070 Super", 7, 5},
        {0x1e93, "NVIDIA GeForce RTX 2080 Super", 7, 5},
        {0x1eb0, "Quadro RTX 5000", 7, 5},
        {0x1eb1, "Quadro RTX 4000", 7, 5},
        {0x1eb5, "Quadro RTX 5000", 7, 5},
        {0x1eb6, "Quadro RTX 4000", 7, 5},
        {0x1eb8, "Tesla T4", 7, 5},
        {0x1ec2, "NVIDIA GeForce RTX 2070 SUPER", 7, 5},
        {0x1ec7, "NVIDIA GeForce RTX 2070 SUPER", 7, 5},
        {0x1ed0, "NVIDIA GeForce RTX 2080", 7, 5},
        {0x1ed1, "NVIDIA GeForce RTX 2070 Super", 7, 5},
        {0x1ed3, "NVIDIA GeForce RTX 2080 Super", 7, 5},
        {0x1ef5, "Quadro RTX 5000", 7, 5},
        {0x1f02, "NVIDIA GeForce RTX 2070", 7, 5},
        {0x1f03, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1f06, "NVIDIA GeForce RTX 2060 SUPER", 7, 5},
        {0x1f07, "NVIDIA GeForce RTX 2070", 7, 5},
        {0x1f08, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1f0a, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x1f10, "NVIDIA GeForce RTX 2070", 7, 5},
        {0x1f11, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1f12, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1f14, "NVIDIA GeForce RTX 2070", 7, 5},
        {0x1f15, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1f36, "Quadro RTX 3000", 7, 5},
        {0x1f42, "NVIDIA GeForce RTX 2060 SUPER", 7, 5},
        {0x1f47, "NVIDIA GeForce RTX 2060 SUPER", 7, 5},
        {0x1f50, "NVIDIA GeForce RTX 2070", 7, 5},
        {0x1f51, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1f54, "NVIDIA GeForce RTX 2070", 7, 5},
        {0x1f55, "NVIDIA GeForce RTX 2060", 7, 5},
        {0x1f76, "Quadro RTX 3000", 7, 5},

        /* Turing TU117 (7.5) */
        {0x1f82, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x1f83, "NVIDIA GeForce GTX 1630", 7, 5},
        {0x1f91, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x1f95, "NVIDIA GeForce GTX 1650 Ti", 7, 5},
        {0x1f96, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x1f97, "NVIDIA GeForce MX450", 7, 5},
        {0x1f98, "NVIDIA GeForce MX450", 7, 5},
        {0x1f99, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x1f9c, "NVIDIA GeForce MX450", 7, 5},
        {0x1f9d, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x1f9f, "NVIDIA GeForce MX550", 7, 5},
        {0x1fa0, "NVIDIA GeForce MX550", 7, 5},
        {0x1fb0, "NVIDIA T1000", 7, 5},
        {0x1fb1, "NVIDIA T600", 7, 5},
        {0x1fb2, "NVIDIA T400", 7, 5},
        {0x1fb6, "NVIDIA T600 Laptop GPU", 7, 5},
        {0x1fb7, "NVIDIA T550 Laptop GPU", 7, 5},
        {0x1fb8, "Quadro T2000", 7, 5},
        {0x1fb9, "Quadro T1000", 7, 5},
        {0x1fba, "NVIDIA T600 Laptop GPU", 7, 5},
        {0x1fbb, "NVIDIA T500", 7, 5},
        {0x1fbc, "NVIDIA T1200 Laptop GPU", 7, 5},
        {0x1fdd, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x1ff0, "NVIDIA T1000 8GB", 7, 5},
        {0x1ff2, "NVIDIA T400 4GB", 7, 5},
        {0x1ff9, "Quadro T1000", 7, 5},

        /* Ampere GA100 (8.0) */
        {0x20b0, "NVIDIA A100-SXM4-40GB", 8, 0},
        {0x20b1, "NVIDIA A100-PCIE-40GB", 8, 0},
        {0x20b2, "NVIDIA A100-SXM4-80GB", 8, 0},
        {0x20b3, "NVIDIA A100-SXM-64GB", 8, 0},
        {0x20b5, "NVIDIA A100 80GB PCIe", 8, 0},
        {0x20b7, "NVIDIA A30", 8, 0},
        {0x20bd, "NVIDIA A800-SXM4-40GB", 8, 0},
        {0x20f1, "NVIDIA A100-PCIE-40GB", 8, 0},
        {0x20f3, "NVIDIA A800-SXM4-80GB", 8, 0},
        {0x20f5, "NVIDIA A800 80GB PCIe", 8, 0},
        {0x20f6, "NVIDIA A800 40GB Active", 8, 0},
        {0x20fd, "NVIDIA AX800", 8, 0},

        /* Turing TU116 (7.5) */
        {0x2182, "NVIDIA GeForce GTX 1660 Ti", 7, 5},
        {0x2184, "NVIDIA GeForce GTX 1660", 7, 5},
        {0x2187, "NVIDIA GeForce GTX 1650 SUPER", 7, 5},
        {0x2188, "NVIDIA GeForce GTX 1650", 7, 5},
        {0x2191, "NVIDIA GeForce GTX 1660 Ti", 7, 5},
        {0x2192, "NVIDIA GeForce GTX 1650 Ti", 7, 5},
        {0x21c4, "NVIDIA GeForce GTX 1660 SUPER", 7, 5},
        {0x21d1, "NVIDIA GeForce GTX 1660 Ti", 7, 5},

        /* Ampere GA102 (8.6) */
        {0x2203, "NVIDIA GeForce RTX 3090 Ti", 8, 6},
        {0x2204, "NVIDIA GeForce RTX 3090", 8, 6},
        {0x2206, "NVIDIA GeForce RTX 3080", 8, 6},
        {0x2207, "NVIDIA GeForce RTX 3070 Ti", 8, 6},
        {0x2208, "NVIDIA GeForce RTX 3080 Ti", 8, 6},
        {0x220a, "NVIDIA GeForce RTX 3080", 8, 6},
        {0x2216, "NVIDIA GeForce RTX 3080", 8, 6},
        {0x2230, "NVIDIA RTX A6000", 8, 6},
        {0x2231, "NVIDIA RTX A5000", 8, 6},
        {0x2232, "NVIDIA RTX A4500", 8, 6},
        {0x2233, "NVIDIA RTX A5500", 8, 6},
        {0x2235, "NVIDIA A40", 8, 6},
        {0x2236, "NVIDIA A10", 8, 6},
        {0x2237, "NVIDIA A10G", 8, 6},
        {0x2238, "NVIDIA A10M", 8, 6},

        /* Hopper GH100 (9.0) */
        {0x230e, "NVIDIA H20 NVL16", 9, 0},
        {0x2321, "NVIDIA H100 NVL", 9, 0},
        {0x2322, "NVIDIA H800 PCIe", 9, 0},
        {0x2324, "NVIDIA H800", 9, 0},
        {0x2329, "NVIDIA H20", 9, 0},
        {0x232c, "NVIDIA H20-3e", 9, 0},
        {0x2330, "NVIDIA H100 80GB HBM3", 9, 0},
        {0x2331, "NVIDIA H100 PCIe", 9, 0},
        {0x2335, "NVIDIA H200", 9, 0},
        {0x2336, "NVIDIA H100", 9, 0},
        {0x2339, "NVIDIA H100", 9, 0},
        {0x233a, "NVIDIA H800 NVL", 9, 0},
        {0x233b, "NVIDIA H200 NVL", 9, 0},
        {0x2342, "NVIDIA GH200", 9, 0},
        {0x2348, "NVIDIA GH200 144G HBM3e", 9, 0},

        /* Ampere GA103/GA104/GA106/GA107 (8.6) */
        {0x2414, "NVIDIA GeForce RTX 3060 Ti", 8, 6},
        {0x2420, "NVIDIA GeForce RTX 3080 Ti Laptop GPU", 8, 6},
        {0x2438, "NVIDIA RTX A5500 Laptop GPU", 8, 6},
        {0x2460, "NVIDIA GeForce RTX 3080 Ti Laptop GPU", 8, 6},
        {0x2482, "NVIDIA GeForce RTX 3070 Ti", 8, 6},
        {0x2484, "NVIDIA GeForce RTX 3070", 8, 6},
        {0x2486, "NVIDIA GeForce RTX 3060 Ti", 8, 6},
        {0x2487, "NVIDIA GeForce RTX 3060", 8, 6},
        {0x2488, "NVIDIA GeForce RTX 3070", 8, 6},
        {0x2489, "NVIDIA GeForce RTX 3060 Ti", 8, 6},
        {0x249c, "NVIDIA GeForce RTX 3080 Laptop GPU", 8, 6},
        {0x249d, "NVIDIA GeForce RTX 3070 Laptop GPU", 8, 6},
        {0x24a0, "NVIDIA GeForce RTX 3070 Ti Laptop GPU", 8, 6},
        {0x24b0, "NVIDIA RTX A4000", 8, 6},
        {0x24b1, "NVIDIA RTX A4000H", 8, 6},
        {0x24b6, "NVIDIA RTX A5000 Laptop GPU", 8, 6},
        {0x24b7, "NVIDIA RTX A4000 Laptop GPU", 8, 6},
        {0x24b8, "NVIDIA RTX A3000 Laptop GPU", 8, 6},
        {0x24b9, "NVIDIA RTX A3000 12GB Laptop GPU", 8, 6},
        {0x24ba, "NVIDIA RTX A4500 Laptop GPU", 8, 6},
        {0x24bb, "NVIDIA RTX A3000 12GB Laptop GPU", 8, 6},
        {0x24c7, "NVIDIA GeForce RTX 3060", 8, 6},
        {0x24c9, "NVIDIA GeForce RTX 3060 Ti", 8, 6},
        {0x24dc, "NVIDIA GeForce RTX 3080 Laptop GPU", 8, 6},
        {0x24dd, "NVIDIA GeForce RTX 3070 Laptop GPU", 8, 6},
        {0x24e0, "NVIDIA GeForce RTX 3070 Ti Laptop GPU", 8, 6},
        {0x2503, "NVIDIA GeForce RTX 3060", 8, 6},
        {0x2504, "NVIDIA GeForce RTX 3060", 8, 6},
        {0x2507, "NVIDIA GeForce RTX 3050", 8, 6},
        {0x2508, "NVIDIA GeForce RTX 3050 OEM", 8, 6},
        {0x2520, "NVIDIA GeForce RTX 3060 Laptop GPU", 8, 6},
        {0x2521, "NVIDIA GeForce RTX 3060 Laptop GPU", 8, 6},
        {0x2523, "NVIDIA GeForce RTX 3050 Ti Laptop GPU", 8, 6},
        {0x2531, "NVIDIA RTX A2000", 8, 6},
        {0x2544, "NVIDIA GeForce RTX 3060", 8, 6},
        {0x2560, "NVIDIA GeForce RTX 3060 Laptop GPU", 8, 6},
        {0x2563, "NVIDIA GeForce RTX 3050 Ti Laptop GPU", 8, 6},
        {0x2571, "NVIDIA RTX A2000 12GB", 8, 6},
        {0x2582, "NVIDIA GeForce RTX 3050", 8, 6},
        {0x2584, "NVIDIA GeForce RTX 3050", 8, 6},
        {0x25a0, "NVIDIA GeForce RTX 3050 Ti Laptop GPU", 8, 6},
        {0x25a2, "NVIDIA GeForce RTX 3050 Laptop GPU", 8, 6},
        {0x25a5, "NVIDIA GeForce RTX 3050 Laptop GPU", 8, 6},
        {0x25a6, "NVIDIA GeForce MX570", 8, 6},
        {0x25a7, "NVIDIA GeForce RTX 2050", 8, 6},
        {0x25a9, "NVIDIA GeForce RTX 2050", 8, 6},
        {0x25aa, "NVIDIA GeForce MX570 A", 8, 6},
        {0x25ab, "NVIDIA GeForce RTX 3050 4GB Laptop GPU", 8, 6},
        {0x25ac, "NVIDIA GeForce RTX 3050 6GB Laptop GPU", 8, 6},
        {0x25ad, "NVIDIA GeForce RTX 2050", 8, 6},
        {0x25b0, "NVIDIA RTX A1000", 8, 6},
        {0x25b2, "NVIDIA RTX A400", 8, 6},
        {0x25b6, "NVIDIA A2/A16", 8, 6},
        {0x25b8, "NVIDIA RTX A2000 Laptop GPU", 8, 6},
        {0x25b9, "NVIDIA RTX A1000 Laptop GPU", 8, 6},
        {0x25ba, "NVIDIA RTX A2000 8GB Laptop GPU", 8, 6},
        {0x25bb, "NVIDIA RTX A500 Laptop GPU", 8, 6},
        {0x25bc, "NVIDIA RTX A1000 6GB Laptop GPU", 8, 6},
        {0x25bd, "NVIDIA RTX A500 Laptop GPU", 8, 6},
        {0x25e0, "NVIDIA GeForce RTX 3050 Ti Laptop GPU", 8, 6},
        {0x25e2, "NVIDIA GeForce RTX 3050 Laptop GPU", 8, 6},
        {0x25e5, "NVIDIA GeForce RTX 3050 Laptop GPU", 8, 6},
        {0x25ec, "NVIDIA GeForce RTX 3050 6GB Laptop GPU", 8, 6},
        {0x25ed, "NVIDIA GeForce RTX 2050", 8, 6},

        /* Ada Lovelace AD10x (8.9) */
        {0x2684, "NVIDIA GeForce RTX 4090", 8, 9},
        {0x2685, "NVIDIA GeForce RTX 4090 D", 8, 9},
        {0x2689, "NVIDIA GeForce RTX 4070 Ti SUPER", 8, 9},
        {0x26b1, "NVIDIA RTX 6000 Ada Generation", 8, 9},
        {0x26b2, "NVIDIA RTX 5000 Ada Generation", 8, 9},
        {0x26b3, "NVIDIA RTX 5880 Ada Generation", 8, 9},
        {0x26b5, "NVIDIA L40", 8, 9},
        {0x26b9, "NVIDIA L40S", 8, 9},
        {0x26ba, "NVIDIA L20", 8, 9},
        {0x2702, "NVIDIA GeForce RTX 4080 SUPER", 8, 9},
        {0x2704, "NVIDIA GeForce RTX 4080", 8, 9},
        {0x2705, "NVIDIA GeForce RTX 4070 Ti SUPER", 8, 9},
        {0x2709, "NVIDIA GeForce RTX 4070", 8, 9},
        {0x2717, "NVIDIA GeForce RTX 4090 Laptop GPU", 8, 9},
        {0x2730, "NVIDIA RTX 5000 Ada Generation Laptop GPU", 8, 9},
        {0x2757, "NVIDIA GeForce RTX 4090 Laptop GPU", 8, 9},
        {0x2782, "NVIDIA GeForce RTX 4070 Ti", 8, 9},
        {0x2783, "NVIDIA GeForce RTX 4070 SUPER", 8, 9},
        {0x2786, "NVIDIA GeForce RTX 4070", 8, 9},
        {0x2788, "NVIDIA GeForce RTX 4060 Ti", 8, 9},
        {0x27a0, "NVIDIA GeForce RTX 4080 Laptop GPU", 8, 9},
        {0x27b0, "NVIDIA RTX 4000 SFF Ada Generation", 8, 9},
        {0x27b1, "NVIDIA RTX 4500 Ada Generation", 8, 9},
        {0x27b2, "NVIDIA RTX 4000 Ada Generation", 8, 9},
        {0x27b6, "NVIDIA L2", 8, 9},
        {0x27b8, "NVIDIA L4", 8, 9},
        {0x27ba, "NVIDIA RTX 4000 Ada Generation Laptop GPU", 8, 9},
        {0x27bb, "NVIDIA RTX 3500 Ada Generation Laptop GPU", 8, 9},
        {0x27e0, "NVIDIA GeForce RTX 4080 Laptop GPU", 8, 9},
        {0x2803, "NVIDIA GeForce RTX 4060 Ti", 8, 9},
        {0x2805, "NVIDIA GeForce RTX 4060 Ti", 8, 9},
        {0x2808, "NVIDIA GeForce RTX 4060", 8, 9},
        {0x2820, "NVIDIA GeForce RTX 4070 Laptop GPU", 8, 9},
        {0x2822, "NVIDIA GeForce RTX 3050 A Laptop GPU", 8, 9},
        {0x2838, "NVIDIA RTX 3000 Ada Generation Laptop GPU", 8, 9},
        {0x2860, "NVIDIA GeForce RTX 4070 Laptop GPU", 8, 9},
        {0x2882, "NVIDIA GeForce RTX 4060", 8, 9},
        {0x28a0, "NVIDIA GeForce RTX 4060 Laptop GPU", 8, 9},
        {0x28a1, "NVIDIA GeForce RTX 4050 Laptop GPU", 8, 9},
        {0x28a3, "NVIDIA GeForce RTX 3050 A Laptop GPU", 8, 9},
        {0x28b0, "NVIDIA RTX 2000 Ada Generation", 8, 9},
        {0x28b8, "NVIDIA RTX 2000 Ada Generation Laptop GPU", 8, 9},
        {0x28b9, "NVIDIA RTX 1000 Ada Generation Laptop GPU", 8, 9},
        {0x28ba, "NVIDIA RTX 500 Ada Generation Laptop GPU", 8, 9},
        {0x28bb, "NVIDIA RTX 500 Ada Generation Laptop GPU", 8, 9},
        {0x28e0, "NVIDIA GeForce RTX 4060 Laptop GPU", 8, 9},
        {0x28e1, "NVIDIA GeForce RTX 4050 Laptop GPU", 8, 9},
        {0x28e3, "NVIDIA GeForce RTX 3050 A Laptop GPU", 8, 9},

        /* Blackwell data center GB100/GB102 (10.0) */
        {0x2901, "NVIDIA B200", 10, 0},
        {0x2909, "NVIDIA B200", 10, 0},
        {0x2941, "NVIDIA GB200", 10, 0},
        {0x29bc, "NVIDIA B100", 10, 0},

        /* Blackwell GB10B, Jetson Thor (11.0; "sm_101" before CUDA 13) */
        {0x2b00, "NVIDIA Jetson AGX Thor", 11, 0},

        /* Blackwell GB20x consumer and workstation (12.0), GB10 (12.1) */
        {0x2b85, "NVIDIA GeForce RTX 5090", 12, 0},
        {0x2b87, "NVIDIA GeForce RTX 5090 D", 12, 0},
        {0x2b8c, "NVIDIA GeForce RTX 5090 D v2", 12, 0},
        {0x2bb1, "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 12, 0},
        {0x2bb2, "NVIDIA RTX PRO 6000D Blackwell Workstation Edition", 12, 0},
        {0x2bb3, "NVIDIA RTX PRO 5000 Blackwell", 12, 0},
        {0x2bb4, "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 12, 0},
        {0x2bb5, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 12, 0},
        {0x2bb9, "NVIDIA RTX 6000D", 12, 0},
        {0x2bbc, "NVIDIA RTX PRO 6000D Blackwell Max-Q Workstation Edition", 12, 0},
        {0x2c02, "NVIDIA GeForce RTX 5080", 12, 0},
        {0x2c05, "NVIDIA GeForce RTX 5070 Ti", 12, 0},
        {0x2c18, "NVIDIA GeForce RTX 5090 Laptop GPU", 12, 0},
        {0x2c19, "NVIDIA GeForce RTX 5080 Laptop GPU", 12, 0},
        {0x2c31, "NVIDIA RTX PRO 4500 Blackwell", 12, 0},
        {0x2c33, "NVIDIA RTX PRO 4000 Blackwell SFF Edition", 12, 0},
        {0x2c34, "NVIDIA RTX PRO 4000 Blackwell", 12, 0},
        {0x2c38, "NVIDIA RTX PRO 5000 Blackwell Generation Laptop GPU", 12, 0},
        {0x2c39, "NVIDIA RTX PRO 4000 Blackwell Generation Laptop GPU", 12, 0},
        {0x2c3a, "NVIDIA RTX PRO 4500 Blackwell Server Edition", 12, 0},
        {0x2c58, "NVIDIA GeForce RTX 5090 Laptop GPU", 12, 0},
        {0x2c59, "NVIDIA GeForce RTX 5080 Laptop GPU", 12, 0},
        {0x2d04, "NVIDIA GeForce RTX 5060 Ti", 12, 0},
        {0x2d05, "NVIDIA GeForce RTX 5060", 12, 0},
        {0x2d18, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0},
        {0x2d19, "NVIDIA GeForce RTX 5060 Laptop GPU", 12, 0},
        {0x2d30, "NVIDIA RTX PRO 2000 Blackwell", 12, 0},
        {0x2d39, "NVIDIA RTX PRO 2000 Blackwell Generation Laptop GPU", 12, 0},
        {0x2d58, "NVIDIA GeForce RTX 5070 Laptop GPU", 12, 0},
        {0x2d59, "NVIDIA GeForce RTX 5060 Laptop GPU", 12, 0},
        {0x2d83, "NVIDIA GeForce RTX 5050", 12, 0},
        {0x2d98, "NVIDIA GeForce RTX 5050 Laptop GPU", 12, 0},
        {0x2db8, "NVIDIA RTX PRO 1000 Blackwell Generation Laptop GPU", 12, 0},
        {0x2db9, "NVIDIA RTX PRO 500 Blackwell Generation Laptop GPU", 12, 0},
        {0x2dd8, "NVIDIA GeForce RTX 5050 Laptop GPU", 12, 0},
        {0x2e12, "NVIDIA GB10", 12, 1},
        {0x2f04, "NVIDIA GeForce RTX 5070", 12, 0},
        {0x2f06, "NVIDIA GeForce RTX 5060", 12, 0},
        {0x2f18, "NVIDIA GeForce RTX 5070 Ti Laptop GPU", 12, 0},
        {0x2f38, "NVIDIA RTX PRO 3000 Blackwell Generation Laptop GPU", 12, 0},
        {0x2f58, "NVIDIA GeForce RTX 5070 Ti Laptop GPU", 12, 0},

        /* Blackwell Ultra data center (10.3) */
        {0x3182, "NVIDIA B300 SXM6 AC", 10, 3},
        {0x31c2, "NVIDIA GB300", 10, 3},
        {0x31c3, "NVIDIA GB300", 10, 3},
};

#define PCI_GPUS_LEN (sizeof pci_gpus / sizeof pci_gpus[0])

/* Exposes the whole table (sorted by device_id, ids unique) for tests and
 * reports. Sets *out to the first entry; returns the number of entries. */
size_t ml_pci_table(const ml_pci_gpu **out)
{
	if (out)
		*out = pci_gpus;
	return PCI_GPUS_LEN;
}

const ml_pci_gpu *ml_pci_lookup(uint16_t device_id)
{
	size_t lo = 0, hi = PCI_GPUS_LEN;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint16_t id = pci_gpus[mid].device_id;

		if (id == device_id)
			return &pci_gpus[mid];
		if (id < device_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
