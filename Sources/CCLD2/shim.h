/* CLD2, Compact Language Detector 2 (Debian: libcld2-dev). Its API is C++ only (cld2/public/compact_lang_det.h), so
   nothing of it is declared here: CShims/cld2.cpp calls it and declares a C function in CShims.h. This module exists
   to link libcld2 (`link "cld2"`), through the `import CCLD2` in Decoders/Text/LanguageDetection.swift. */
#ifndef RESPDECODE_CCLD2_SHIM_H
#define RESPDECODE_CCLD2_SHIM_H
#endif
