int idlc_dummy_emit_header(void); int idlc_dummy_emit_header(void){return 0;}
