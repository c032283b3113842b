int idlc_dummy_emit_desc(void); int idlc_dummy_emit_desc(void){return 0;}
