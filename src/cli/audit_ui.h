/*
 * audit_ui.h - an audit as people read it (`mlsetup audit`): every library
 * with its code and its answer per GPU, each torch wheel's build, and the
 * summary per GPU.
 */
#ifndef MLSETUP_CLI_AUDIT_UI_H
#define MLSETUP_CLI_AUDIT_UI_H

#include "cli.h"
#include "mlsetup/audit.h"

/* Prints audit a for people with ml_say(): per file its executable SASS
 * and PTX (the PTX ISA when read), the other code it carries, and per GPU
 * runs / does NOT run / unverified / not for this GPU with the reason
 * (and torch's own judgement of torch's library where it differs); per
 * torch wheel its build and the driver it needs; then the summary.
 * detected: the GPUs were detected here (said in the summary). */
void ml_cli_print_audit(const ml_audit *a, bool detected);

#endif
