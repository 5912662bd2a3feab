/* ICU's common library (Debian: libicu-dev, which libxml2-dev already depends on; libxml2 links it at run time). Only
   CShims/cld2.cpp calls it (uloc_getISO3Language, for ISO 639-3 codes). Its headers are not included here: ICU's
   types clash with Foundation's copy of ICU in one Swift module graph (see CLibXML2/shim.h). This module exists to
   link libicuuc (`link "icuuc"`), through the `import CICU` in Decoders/Text/LanguageDetection.swift. */
#ifndef RESPDECODE_CICU_SHIM_H
#define RESPDECODE_CICU_SHIM_H
#endif
