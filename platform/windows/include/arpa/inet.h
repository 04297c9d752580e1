/* arpa/inet.h (Windows) - inet_pton() and AF_INET / AF_INET6 are
 * Winsock's (ws2_32, Windows Vista and later). */
#ifndef MLSETUP_WIN_ARPA_INET_H
#define MLSETUP_WIN_ARPA_INET_H
#include <winsock2.h>
#include <ws2tcpip.h>
#endif
