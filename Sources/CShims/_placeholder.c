void cshims_placeholder(void) {}
