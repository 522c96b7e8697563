#pragma once

#ifdef __cplusplus
extern "C" {
#endif

void nofp_spin(unsigned long iterations);
void nofp_chain(int depth, unsigned long iterations);

#ifdef __cplusplus
}
#endif
