#include <ldns/ldns.h>
